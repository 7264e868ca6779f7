"""Methods that serve every suite through its text view (the LLM agent)."""
