"""Schema-edit cases, one module a topic (see ``tests.spec_edits.CASE_MODULES``)."""
