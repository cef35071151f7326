"""CLadder (LM Playschool 2026 static benchmark): a causal-inference question answered Yes or No."""
