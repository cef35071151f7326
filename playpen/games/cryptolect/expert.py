"""placeholder"""


def respond(messages: list[dict]) -> str:
    return "PROBES:\n1. a dog see a bird"
