"""Codenames (clembench 2.0 rules, GAMES.md section 6).

A Cluegiver, who knows which of the 25 board words belong to the team, the opponent, the innocent bystanders and
the assassin, gives a one-word clue and names its target words; the Guesser picks up to that many words, which are
revealed in order until one is not a team word. A simulated opponent then reveals k of its own words. The team wins
when all its words are revealed, and loses when the opponent's are, or when it reveals the assassin. Every rule
violation aborts the episode.

Differences from the original (no rule changes):
- The simulated opponent draws with `random.Random(42).sample` over its hidden words, as clembench does, but with
  one generator per episode. clembench seeds the global generator once per benchmark run, so the words its opponent
  reveals in an episode depend on every episode played before it (the recorded 2.0 runs confirm this), which
  neither a concurrent run nor the replay of a single episode can reproduce. `playpen replay` therefore has the
  opponent reveal the words the recorded episode revealed (`follow_recorded`).
- The Cluegiver's next prompt is written after the opponent's move, so it lists the board as it is; clembench's
  still listed the opponent words just revealed.
- The clue's lemma check uses Playpen's WordNet-style noun lemmas (see rules.py), as WordNet's data is unavailable.
- Only the flags of the 2.0 experiments are played (STRIP WORDS on, the others off).
- Prompts are Playpen's own, read from the experiment (the 2.0 instance file has none: Playpen's are used).

LM Playschool 2026 version: the opponent's win is noticed late. When the simulated opponent reveals its last word,
the game goes on to the next round and ends (the opponent has won) only once the Cluegiver has given a valid clue.
"Number of turns" (and so Efficiency) is one more than the Guesser's answers, valid or not (**quirk**: a game that
ends after the Guesser's answer counts one round too many). Its Request Success Ratio is rounded to 3 decimals.
"""

from __future__ import annotations

import math
import random
from collections import deque
from string import Template

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.metrics import (
    BENCH_SCORE,
    METRIC_ABORTED,
    METRIC_REQUEST_SUCCESS_RATIO,
    METRIC_SUCCESS,
)

from playpen.games.codenames import expert, rules
from playpen.games.codenames.rules import ASSASSIN, CLUEGIVER, GUESSER, INNOCENT, OPPONENT, TEAM
from playpen.games.common import VERSION_2_0, VERSION_2026, ExpertPlayer, game_version, log_outcome

OPPONENT_SEED = 42


class CodenamesGameMaster(DialogueGameMaster):
    """One episode: rounds of clue, guesses and the simulated opponent's move."""

    def _on_setup(self, **instance):
        exp = self.experiment
        flags = exp.get("flags", {})
        unsupported = sorted(name for name, on in flags.items() if on and name != rules.STRIP_WORDS)
        if unsupported:
            raise ValueError(f"codenames plays the clembench 2.0 flags only; unsupported flags are on: {unsupported}")
        self.strip_words: bool = flags.get(rules.STRIP_WORDS, True)
        self.opponent_reveals: int = int(exp.get("opponent difficulty", 1))
        self.prompts: dict = exp.get("prompts") or rules.load_prompts()
        self.board = rules.Board(instance["board"], instance["assignments"])
        self.rng = random.Random(OPPONENT_SEED)
        self.recorded_draws: deque[str] | None = None  # set by replay: the recorded opponent's words
        self.engaged = {role: {flag: 0 for flag in rules.FLAGS} for role in (CLUEGIVER, GUESSER)}
        self.clue, self.targets = "", []
        self.feedback = {CLUEGIVER: "", GUESSER: ""}
        self.rounds = 0
        self.guesser_answers = 0  # 2026's "Number of turns" counts these
        self.through_assassin = False
        self.version = game_version(self.game_spec)

        self.cluegiver = ExpertPlayer(self.player_models[0], CLUEGIVER, expert.cluegiver_response)
        self.guesser = ExpertPlayer(self.player_models[1], GUESSER, expert.guesser_response)
        self.add_player(self.cluegiver, initial_context=self._cluegiver_prompt("cluegiver_initial"))
        self.add_player(self.guesser)

    # ------------------------------------------------------------------------------------ prompts

    def _cluegiver_prompt(self, name: str) -> str:
        hidden = self.board.hidden
        return Template(self.prompts[name]).safe_substitute(
            team_words=", ".join(hidden[TEAM]), opponent_words=", ".join(hidden[OPPONENT]),
            innocent_words=", ".join(hidden[INNOCENT]), assassin_words=", ".join(hidden[ASSASSIN]))

    def _guesser_prompt(self, name: str) -> str:
        return Template(self.prompts[name]).safe_substitute(
            clue=self.clue, number=len(self.targets), board=", ".join(self.board.hidden_words()))

    def _feedback(self, evaluated: list[tuple[str, str]]) -> None:
        """What the turn revealed: the team words found, then the word that ended the turn (if any)."""
        phrases = self.prompts["feedback"]
        correct = [word for word, assignment in evaluated if assignment == TEAM]
        parts = [Template(phrases["correct"]).safe_substitute(words=", ".join(correct))] if correct else []
        word, assignment = evaluated[-1]
        if assignment != TEAM:
            parts.append(Template(phrases["wrong"]).safe_substitute(word=word, assignment=assignment))
        self.feedback = {CLUEGIVER: " ".join(parts + [phrases["cluegiver_end"]]),
                         GUESSER: " ".join(parts + [phrases["guesser_end"]])}

    # ---------------------------------------------------------------------------------- responses

    def _parse_response(self, player: Player, response: str):
        if player is self.guesser:
            self.guesser_answers += 1
        hidden, team_revealed = self.board.hidden_words(), self.board.revealed_by(TEAM)
        try:
            if player is self.cluegiver:
                return rules.parse_clue(response, hidden, team_revealed, self.strip_words, self.engaged[CLUEGIVER])
            return rules.parse_guesses(response, hidden, team_revealed, len(self.targets), self.clue,
                                       self.strip_words, self.engaged[GUESSER])
        except rules.RuleViolation as violation:
            self.log_to_self("validation error", violation.as_log(response))
            raise ParseError(violation.message, response=response, key=violation.kind) from None

    def _on_parse_error(self, error: ParseError):
        self.state.abort()  # every violation aborts in clembench 2.0

    def _advance_game(self, player: Player, parsed):
        if player is self.cluegiver:
            self._on_clue(*parsed)
        else:
            self._on_guesses(parsed)

    def _on_clue(self, clue: str, targets: list[str]):
        self.clue, self.targets = clue, targets
        self.log_to_self("clue", clue)
        self.log_to_self("targets", targets)
        for target in targets:
            self.log_to_self("word targeted", {"word": target, "assignment": self.board.assignment(target)})
        if self.version == VERSION_2026 and self._check_end():
            return  # 2026 checks the opponent's move only after the next clue (see _on_after_round)
        if self.rounds == 1:
            self.set_context_for(self.guesser, self._guesser_prompt("guesser_initial"))
        else:
            self.set_context_for(self.guesser, f"{self.feedback[GUESSER]}\n{self._guesser_prompt('guesser_next')}")

    def _on_guesses(self, guesses: list[str]):
        self.log_to_self("guesses", guesses)
        evaluated = []
        for guess in guesses:
            assignment = self.board.reveal(guess)
            evaluated.append((guess, assignment))
            self.log_to_self("team revealed", {"word": guess, "assignment": assignment})
            if guess in self.targets:
                self.log_to_self("target revealed", {"word": guess, "assignment": assignment})
            if assignment != TEAM:
                self.log_to_self("turn end after", guess)
                break
        self._feedback(evaluated)
        self._check_end()

    def _check_end(self) -> bool:
        """End the game if the board is decided; True when it did."""
        result = self.board.result()
        if result is None:
            return False
        outcome, self.through_assassin = result
        if outcome == "win":
            self.state.succeed()
        else:
            self.state.failed()
        self.log_to_self("game end", f"{'team' if outcome == 'win' else 'opponent'} has won"
                         + (" through the assassin" if self.through_assassin else ""))
        return True

    # ------------------------------------------------------------------------------------- rounds

    def _on_before_round(self):
        self.rounds += 1
        self.log_to_self("board status", self.board.status())
        if self.rounds > 1:
            self.set_context_for(self.cluegiver,
                                 f"{self.feedback[CLUEGIVER]}\n{self._cluegiver_prompt('cluegiver_next')}")

    def _on_after_round(self):
        if self.state.outcome.is_terminal:
            return
        hidden = self.board.hidden[OPPONENT]
        for word in self._opponent_draw(hidden):
            assignment = self.board.reveal(word, by=OPPONENT)
            self.log_to_self("opponent revealed", {"word": word, "assignment": assignment})
        if self.version != VERSION_2026:  # 2026 notices the opponent's win after the next clue (_on_clue)
            self._check_end()

    def _opponent_draw(self, hidden: list[str]) -> list[str]:
        count = min(self.opponent_reveals, len(hidden))
        if self.recorded_draws is None:
            return self.rng.sample(hidden, count)
        drawn = [self.recorded_draws.popleft() for _ in range(min(count, len(self.recorded_draws)))]
        return [word for word in drawn if word in hidden]

    def follow_recorded(self, interactions: dict) -> None:
        """Replay: reveal the opponent words a recorded episode revealed, in order, instead of drawing them."""
        self.recorded_draws = deque(
            event["action"]["content"]["word"] for events in interactions.get("turns", []) for event in events
            if event.get("action", {}).get("type") == "opponent revealed"
            and isinstance(event["action"].get("content"), dict) and "word" in event["action"]["content"])

    def _on_after_game(self):
        log_outcome(self)
        self.log_key("board end status", self.board.status())
        self.log_key("Number of turns", self.guesser_answers + 1 if self.version == VERSION_2026 else self.rounds)
        self.log_key("Game ended through assassin", int(self.through_assassin))
        self.log_key("Cluegiver engaged flags", self.engaged[CLUEGIVER])
        self.log_key("Guesser engaged flags", self.engaged[GUESSER])


class CodenamesScorer(GameScorer):
    """Main Score 100 for a win, 0 for a loss, NaN when aborted; precision/recall of targets and guesses."""

    def __init__(self, game_name: str, experiment: dict, game_instance: dict, version: str = VERSION_2_0):
        super().__init__(game_name, experiment, game_instance)
        self.version = version

    def compute_round_score(self, round_idx, round_events) -> None:
        for name, value in rules.round_scores(round_events).items():
            self.log_round_score(round_idx, name, value)

    def compute_episode_scores(self, interactions: dict) -> None:
        exp = self.experiment
        self.log_episode_score("experiment variable", exp.get("variable", ""))
        self.log_episode_score("experiment name", exp.get("name", ""))
        for flag, on in exp.get("flags", {}).items():
            if on:
                for role in (CLUEGIVER, GUESSER):
                    count = interactions.get(f"{role} engaged flags", {}).get(flag, 0)
                    self.log_episode_score(f"{role} {flag.lower()}", count)
        rounds = [self.scores["round scores"][idx] for idx in sorted(self.scores["round scores"])]
        turns = interactions.get("Number of turns", len(rounds))
        scores = rules.episode_scores(rounds, interactions["board end status"], exp["assignments"], turns)
        self.log_episode_score("Game ended through assassin", interactions.get("Game ended through assassin", 0))
        for name, value in scores.items():
            self.log_episode_score(name, value)
        if interactions[METRIC_ABORTED]:
            main_score = math.nan
        else:
            main_score = 100 if interactions[METRIC_SUCCESS] else 0
        self.log_episode_score(BENCH_SCORE, main_score)
        if self.version == VERSION_2026:  # 2026 rounds clemcore's ratio (logged before this method runs)
            episode = self.scores["episode scores"]
            episode[METRIC_REQUEST_SUCCESS_RATIO] = rules.rounded(episode.get(METRIC_REQUEST_SUCCESS_RATIO))


class CodenamesBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> CodenamesGameMaster:
        return CodenamesGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> CodenamesScorer:
        return CodenamesScorer(self.game_name, experiment, game_instance, game_version(self.game_spec))
