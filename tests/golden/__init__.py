"""Golden files: error messages for bad schemas, and diff reports."""
