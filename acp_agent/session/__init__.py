"""ACP semantics: sessions and their turns as the editor sees them."""
