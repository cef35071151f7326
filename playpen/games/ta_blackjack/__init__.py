"""TextArena's Blackjack (LM Playschool 2026 out-of-domain suite)."""
