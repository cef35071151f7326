"""IFEval (LM Playschool 2026 static benchmark): follow every verifiable instruction of a request."""
