"""Deal or No Deal (LM Playschool 2026): two players negotiate how to split a set of items."""
