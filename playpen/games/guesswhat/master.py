"""Guesswhat (clembench 2.0 rules, GAMES.md section 7).

The Guesser sees eight candidate words and finds the Answerer's target by yes/no questions; it gets one
guess, and at most 8 rounds (a round is a question and its answer, or the guess). Prompts, tags, allowed
answers and content-rule patterns come from the experiment, so Playpen's instance files and the official
clembench 2.0 files (with their own wording) both play.
Playpen's content-rule patterns (rules.CONTENT_PATTERNS) accept the same questions as 2.0's; the 2.0 files
bring their own, including a direct-guess pattern that can never match (quirk: a broken back-reference),
applied as written.

Deviation: the word lists and categories are Playpen's own (resources/en/lexicon.json), written by hand
rather than taken from clembench's data.
"""

from __future__ import annotations

import math

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED, METRIC_SUCCESS

from playpen.games.common import ExpertPlayer, log_outcome, recorded_player_order
from playpen.games.guesswhat import expert, rules

PATTERN_KEYS = ("letter_based_pattern", "direct_guess_pattern", "length_question_pattern",
                "syllable_question_pattern", "pos_question_pattern")


class GuessWhatGameMaster(DialogueGameMaster):
    """One episode: the Guesser asks or guesses, the Answerer answers; a guess ends the game."""

    def _on_setup(self, **instance):
        exp = self.experiment
        self.max_rounds: int = exp.get("max_turns", rules.MAX_ROUNDS)
        self.question_tag: str = exp.get("question_tag", rules.QUESTION_TAG)
        self.guess_tag: str = exp.get("guess_tag", rules.GUESS_TAG)
        self.answers: list[str] = exp.get("answer_variations", list(rules.ANSWERS))
        self.patterns = {key: exp[key] for key in PATTERN_KEYS if key in exp} or rules.CONTENT_PATTERNS
        self.target: str = instance["target_word"]
        candidates = instance["candidate_list"]

        guesser_prompt = (exp["guesser_initial_prompt"].replace("$LIST$", str(candidates))
                          .replace("$N$", str(self.max_rounds - 1)))
        answerer_prompt = exp["answerer_initial_prompt"].replace("$TARGET WORD$", str(self.target))
        self.guesser = ExpertPlayer(self.player_models[0], "Guesser", expert.guesser_response)
        self.answerer = ExpertPlayer(self.player_models[1], "Answerer", expert.answerer_response)
        self.add_player(self.guesser, initial_context=guesser_prompt)
        # The Answerer's first message is its instructions followed by the first question.
        self.add_player(self.answerer, initial_prompt=answerer_prompt)

        self.questions: list[str] = []
        self.guess: str | None = None
        self.violation: dict | None = None
        self.rounds = 0  # rounds played, the current one included

    def _parse_response(self, player: Player, response: str) -> tuple[str, str, str]:
        """(move, its text, the whole response): the other player is sent the whole response."""
        try:
            if player is self.answerer:
                rules.check_answer(response, self.answers)
                return "answer", response, response
            move, text = rules.parse_guesser_response(response, self.question_tag, self.guess_tag)
            if move == "question":
                reason = rules.content_violation(text, self.patterns)
                if reason:
                    raise rules.RuleViolation(reason, rules.CONTENT)
            return move, text, response
        except rules.RuleViolation as e:
            raise ParseError(e.reason, response=response, key=e.kind) from None

    def _on_parse_error(self, error: ParseError):
        self.rounds = self.current_round + 1
        self.state.abort()
        role = self.current_player.game_role
        self.violation = {"role": role, "kind": error.key}
        self.log_to_self(error.key, error.reason)
        self.log_to_self(error.key, "abort game")

    def _advance_game(self, player: Player, parsed: tuple[str, str, str]):
        move, text, response = parsed
        self.rounds = self.current_round + 1
        if move == "question":
            self.questions.append(text)
            self.set_context_for(self.answerer, response)
        elif move == "guess":
            self.guess = text
            if rules.is_correct(text, self.target):
                self.state.succeed()
                self.log_to_self("correct guess", text)
            else:
                self.state.failed()
                self.log_to_self("incorrect guess", text)
        else:
            self.set_context_for(self.guesser, response)
            if self.rounds >= self.max_rounds:
                self.state.failed()
                self.log_to_self("max turns reached", str(self.max_rounds))

    def _on_after_game(self):
        log_outcome(self)
        self.log_key("target_word", self.target)
        self.log_key("questions", self.questions)
        self.log_key("guess", self.guess)
        self.log_key("rounds", self.rounds)
        self.log_key("max_rounds", self.max_rounds)
        self.log_key("violation", self.violation)


class GuessWhatScorer(GameScorer):
    """Main Score from the round of a correct guess: 100 up to round 5, then linearly down to 0 at round 8."""

    def compute_round_score(self, round_idx, round_events) -> None:
        won = any(e["action"]["type"] == "correct guess" for e in round_events)
        self.log_round_score(round_idx, "Accuracy", int(won))

    def compute_episode_scores(self, interactions: dict) -> None:
        if interactions[METRIC_ABORTED]:
            score = math.nan
        elif interactions[METRIC_SUCCESS]:
            score = rules.main_score(interactions["rounds"], interactions.get("max_rounds", rules.MAX_ROUNDS))
            self.log_episode_score("Speed", score)
        else:
            score = 0
        self.log_episode_score(BENCH_SCORE, score)
        self.log_episode_score("Questions asked", len(interactions.get("questions", [])))
        violation = interactions.get("violation") or {}
        for kind in (rules.FORMAT, rules.CONTENT):
            for role in ("Guesser", "Answerer"):
                count = int(violation.get("kind") == kind and violation.get("role") == role)
                self.log_episode_score(f"{kind.capitalize()} {role.lower()} response", count)


class GuessWhatBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    replay_players = staticmethod(recorded_player_order)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> GuessWhatGameMaster:
        return GuessWhatGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> GuessWhatScorer:
        return GuessWhatScorer(self.game_name, experiment, game_instance)
