"""get_to_the_point (LM Playschool 2026, out of domain; GAMES-OOD.md section get_to_the_point).

The Helper (Player 1) knows a target word and a start word; each round it sends `CLUE:` followed by the
start word and at most three more words, and the Seeker (Player 2) answers `GUESS:` and one word, up to
five guesses. Each player reads the other's whole response, stripped and lower-cased. A missing tag, or a
clue without the start word as a word of its own, aborts the episode; a clue with more than three added
words, or a guess that is not exactly one word, loses it. A clue that contains the target, even inside
another word, aborts it; a guess that contains the target wins. After five wrong guesses the Helper's
sixth clue is still read and checked (a format error there aborts) before the episode is lost.
Main Score = 100 / rounds on a win, 0 on a loss, NaN when aborted.

Prompts come from the experiment with the 2026 placeholders, so the official instance files play too.
"""

from __future__ import annotations

from clemcore.backends import Model
from clemcore.clemgame import (
    DialogueGameMaster,
    GameBenchmark,
    GameError,
    GameScorer,
    GameSpec,
    ParseError,
    Player,
)
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED, METRIC_SUCCESS

from playpen.games.common import ExpertPlayer, log_outcome
from playpen.games.get_to_the_point import expert, rules


class GetToThePointGameMaster(DialogueGameMaster):
    """One episode: rounds of clue then guess, until the target is guessed, a rule is broken or guesses run out."""

    def _on_setup(self, **instance) -> None:
        exp = self.experiment
        self.max_guesses = int(exp.get("maximum_seeker_guesses", rules.MAX_GUESSES))
        self.max_added = int(exp.get("game_regex", {}).get("range_of_word_additions", rules.MAX_ADDED_WORDS))
        self.start_word: str = instance["start_word"]
        self.target: str = instance["target_word"]
        values = {"N": self.max_guesses, "HELPER_PROMPT_WORD": rules.HELPER_TAG,
                  "SEEKER_PROMPT_WORD": rules.SEEKER_TAG}
        helper_prompt = rules.fill_prompt(exp["initial_prompt_helper"], TARGET_WORD=self.target,
                                          START_WORD=self.start_word, **values)
        seeker_prompt = rules.fill_prompt(exp["initial_prompt_seeker"], **values)

        self.helper = ExpertPlayer(self.player_models[0], "Helper", expert.helper_response)
        self.seeker = ExpertPlayer(self.player_models[1], "Seeker", expert.seeker_response)
        # The Helper's first message is its instructions and, after a blank line, the start word.
        self.add_player(self.helper, initial_prompt=helper_prompt,
                        initial_context=instance.get("current_sentence_fragment", self.start_word))
        self.add_player(self.seeker, initial_prompt=seeker_prompt)
        self.clues: list[str] = []
        self.guesses: list[str] = []

    def _parse_response(self, player: Player, response: str) -> str:
        text = rules.normalise(response)
        if player is self.helper:
            problem = rules.clue_problem(text, self.start_word, self.max_added)
        else:
            problem = rules.guess_problem(text)
        if problem in rules.ABORTING:
            raise ParseError(f"{player.game_role}: {problem}", response=response, key=problem)
        if problem is not None:
            raise GameError(f"{player.game_role}: {problem}", response=response, key=problem)
        return text

    def _on_parse_error(self, error: ParseError) -> None:
        self.log_to_self("invalid format", error.reason)
        self.state.abort()

    def _on_game_error(self, error: GameError) -> None:
        self.log_to_self("rule broken", error.reason)
        self.state.failed()

    def _advance_game(self, player: Player, text: str) -> None:
        if self.current_round >= self.max_guesses:  # the clue after the last wrong guess ends the game
            raise GameError(f"no guesses left after {self.max_guesses}", key="max guesses")
        if player is self.helper:
            if rules.contains_target(text, self.target):
                raise ParseError("the clue reveals the target word", response=text, key="target revealed")
            self.clues.append(text)
            self.log_to_self("valid clue", text)
            self.set_context_for(self.seeker, " " + text)  # the Seeker reads the clue after a space
            return
        self.guesses.append(text)
        if rules.contains_target(text, self.target):
            self.log_to_self("correct guess", text)
            self.state.succeed()
        else:
            self.log_to_self("wrong guess", text)
            self.set_context_for(self.helper, text)

    def _on_after_game(self) -> None:
        log_outcome(self)
        self.log_key("start_word", self.start_word)
        self.log_key("target_word", self.target)
        self.log_key("clues", self.clues)
        self.log_key("guesses", self.guesses)


class GetToThePointScorer(GameScorer):
    """Accuracy per round; Main Score 100 / rounds on a win, 0 on a loss, NaN when aborted."""

    def compute_round_score(self, round_idx, round_events) -> None:
        won = any(event["action"]["type"] == "correct guess" for event in round_events)
        self.log_round_score(round_idx, "Accuracy", int(won))

    def compute_episode_scores(self, interactions: dict) -> None:
        rounds = max(1, len(interactions.get("turns", [])))
        score = rules.main_score(bool(interactions[METRIC_SUCCESS]), bool(interactions[METRIC_ABORTED]), rounds)
        self.log_episode_score(BENCH_SCORE, score)


class GetToThePointBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> GetToThePointGameMaster:
        return GetToThePointGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> GetToThePointScorer:
        return GetToThePointScorer(self.game_name, experiment, game_instance)
