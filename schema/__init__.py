"""The JSON Schemas mcptasks-gen embeds, one folder per Tasks revision (data)."""
