"""EQ-Bench v2 (LM Playschool 2026 static benchmark): rate four emotions of a character 0-10."""
