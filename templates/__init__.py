"""Jinja templates of mcptasks-gen (data, shipped inside the wheel)."""
