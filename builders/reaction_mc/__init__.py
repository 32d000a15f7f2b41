"""The reaction_mc embedded sample script (the builder itself is in benchreg)."""
