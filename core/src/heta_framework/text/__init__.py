"""Language-aware text analysis shared by every keyword index: stop words, Snowball stems, CJK bigrams, detection."""
