"""MolP2S release generator (`generate`, `synthetic`, `building_blocks`) and sample script."""
