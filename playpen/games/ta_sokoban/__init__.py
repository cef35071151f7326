"""TextArena's Sokoban (LM Playschool 2026 out-of-domain suite)."""
