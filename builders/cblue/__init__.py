"""The PromptCBLUE embedded sample script."""
