"""Schema-edit cases by topic (each module has ``CASES``)."""
