"""TextArena's Mastermind (LM Playschool 2026 out-of-domain suite)."""
