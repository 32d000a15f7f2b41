"""The family-agnostic core: task spec, registry, run, records, reports."""
