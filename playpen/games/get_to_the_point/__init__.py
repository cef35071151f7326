"""Get to the point (LM Playschool 2026, out of domain): a Helper extends a start word so that a Seeker guesses a target."""
