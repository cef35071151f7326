"""BIG-Bench Hard (LM Playschool 2026 static benchmark): one few-shot question, the answer must be the target exactly."""
