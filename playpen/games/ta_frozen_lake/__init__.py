"""TextArena's Frozen Lake (LM Playschool 2026 out-of-domain suite)."""
