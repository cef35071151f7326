"""MMLU-Pro (LM Playschool 2026 static benchmark): a ten-option question, answered 'The answer is (X)'."""
