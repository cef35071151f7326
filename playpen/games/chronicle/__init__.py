"""Chronicle (LM Playschool 2026, out of domain): a Narrator describes a historical event, a Detective names it."""
