"""chronicle (LM Playschool 2026, out of domain; GAMES-OOD.md section chronicle).

The Narrator (Player 1) knows a historical event and its forbidden keywords; each round it writes one
sentence after `PARAGRAPH:`, which the Detective (Player 2) receives as "[Sentence r]", and the Detective
answers with a guess after `GUESS:`, for up to ten rounds. A response without its tag (or with nothing
after it) aborts the episode. A paragraph with a forbidden keyword (as a whole word) is passed on and only
marks its round as a violation. A guess that matches an accepted answer (rules.matches, as lenient as the
official matcher) wins at once; ten wrong guesses lose.
Main Score = max(10, 110 - 10·T)·(1 - violating rounds / rounds played) for a win in round T, 0 for a loss,
NaN when aborted (a win with a violation in its only round scores 0).

Prompts come from the experiment with the 2026 placeholders, so the official instance files play too.
"""

from __future__ import annotations

import math

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.master import Outcome
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED

from playpen.games.chronicle import expert, rules
from playpen.games.common import ExpertPlayer, log_outcome

VIOLATION, CORRECT, INVALID = "forbidden keyword violation", "correct guess", "invalid format"


class ChronicleGameMaster(DialogueGameMaster):
    """One episode: rounds of sentence then guess, until a guess names the event or the rounds run out."""

    def _on_setup(self, **instance) -> None:
        exp = self.experiment
        self.max_rounds = int(exp.get("max_turns", rules.MAX_ROUNDS))
        self.target: str = instance["target_event"]
        self.keywords: list[str] = list(instance.get("forbidden_keywords", []))
        self.answers: list[str] = list(instance.get("acceptable_answers", []))
        narrator_prompt = rules.fill_prompt(exp["narrator_initial_prompt"], TARGET_EVENT=self.target,
                                            FORBIDDEN_KEYWORDS=", ".join(self.keywords) or "none",
                                            MAX_TURNS=self.max_rounds)
        detective_prompt = rules.fill_prompt(exp["detective_initial_prompt"], MAX_TURNS=self.max_rounds,
                                             MAX_DETECTIVE_WORDS=exp.get("max_detective_words",
                                                                         rules.MAX_DETECTIVE_WORDS))
        self.narrator = ExpertPlayer(self.player_models[0], "Narrator", expert.narrator_response)
        self.detective = ExpertPlayer(self.player_models[1], "Detective", expert.detective_response)
        self.add_player(self.narrator, initial_context=narrator_prompt)
        # The Detective's first message is its instructions, a blank line and the first sentence.
        self.add_player(self.detective, initial_prompt=detective_prompt)
        self.paragraphs: list[str] = []
        self.guesses: list[str] = []

    def _parse_response(self, player: Player, response: str) -> str:
        if player is self.narrator:
            parsed = rules.paragraph(response)
            missing = f"no sentence after {rules.NARRATOR_TAG}"
        else:
            parsed = rules.guess(response)
            missing = f"no guess after {rules.DETECTIVE_TAG}"
        if parsed is None:
            raise ParseError(f"{player.game_role}: {missing}", response=response, key=INVALID)
        return parsed

    def _on_parse_error(self, error: ParseError) -> None:
        self.log_to_self(INVALID, error.reason)
        self.state.abort()

    def _advance_game(self, player: Player, parsed: str) -> None:
        if player is self.narrator:
            hit = rules.forbidden_hit(parsed, self.keywords)
            if hit is not None:  # a violation costs score, it does not end the game
                self.log_to_self(VIOLATION, hit)
            self.paragraphs.append(parsed)
            self.set_context_for(self.detective, f"[Sentence {len(self.paragraphs)}]\n{parsed}")
            return
        self.guesses.append(parsed)
        if rules.matches(parsed, self.answers):
            self.log_to_self(CORRECT, f"round {self.current_round + 1}")
            self.state.succeed()
            return
        self.log_to_self("wrong guess", parsed)
        self.set_context_for(self.narrator, f'Round {self.current_round + 1} is over. The Detective guessed: '
                                            f'"{parsed}", which is not the event. Write your next sentence, '
                                            f'with something new.')

    def _on_after_round(self) -> None:
        if self.current_round + 1 >= self.max_rounds and self.state.outcome is Outcome.RUNNING:
            self.log_to_self("max turns reached", str(self.max_rounds))
            self.state.failed()

    def _on_after_game(self) -> None:
        log_outcome(self)
        self.log_key("target_event", self.target)
        self.log_key("paragraphs", self.paragraphs)
        self.log_key("guesses", self.guesses)


class ChronicleScorer(GameScorer):
    """narrator_violation per round; the violation rate, the round of the correct guess and the Main Score."""

    def compute_round_score(self, round_idx, round_events) -> None:
        violated = any(event["action"]["type"] == VIOLATION for event in round_events)
        self.log_round_score(round_idx, "narrator_violation", int(violated))

    def compute_episode_scores(self, interactions: dict) -> None:
        turns = interactions.get("turns", [])
        violations = sum(any(e["action"]["type"] == VIOLATION for e in events) for events in turns)
        success_round = next((i + 1 for i, events in enumerate(turns)
                              if any(e["action"]["type"] == CORRECT for e in events)), None)
        rate = violations / max(1, len(turns))  # the last round counts, even when it was cut short
        self.log_episode_score("narrator_mean_violation_rate", rate)
        self.log_episode_score("detective_turns_to_success", math.nan if success_round is None else success_round)
        self.log_episode_score(BENCH_SCORE, rules.main_score(bool(interactions[METRIC_ABORTED]), success_round, rate))


class ChronicleBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> ChronicleGameMaster:
        return ChronicleGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> ChronicleScorer:
        return ChronicleScorer(self.game_name, experiment, game_instance)
