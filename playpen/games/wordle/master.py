"""Wordle, wordle_withclue and wordle_withcritic (clembench 2.0 rules, GAMES.md section 2), and the LM
Playschool 2026 out-of-domain variants wordle-crazy, wordle-crazy_withclue and wordle-crazy_withcritic.

The Guesser has six rounds to find a five-letter word from colour feedback. The clue variants add a
crossword clue; the critic variant adds a Critic who agrees or disagrees with each proposal before the
Guesser commits its final word for the round. Prompts and keywords come from the experiment, so both
Playpen's instance files and the official clembench 2.0 files (with their own wording) can be played.

LM Playschool 2026 version: a relaxed response format (see rules.parse_tagged_response): the explanation
may run over several lines and its tag may be in any case. The repeated guesses are logged as one score,
"Guess Repetitions" (2.0: "repeats guess" and "total guess repetitions").

wordle-crazy* (GAMES-OOD.md section 8): the 2026 rules of their plain counterparts, with the colours under
other names (yellow: right place, black: elsewhere, purple: absent; rules.SCHEMES) and the speed table as
Main Score in all three. Their experiments carry the official 12,953-word list.
"""

from __future__ import annotations

import functools
import math

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

from playpen.games.common import VERSION_2_0, VERSION_2026, ExpertPlayer, game_version, log_outcome
from playpen.games.wordle import expert, rules

MAX_ROUNDS = 6
MAX_REPROMPTS = 5


class WordleGameMaster(DialogueGameMaster):
    """One episode of any of the three variants; the variant follows from the game name."""

    def _on_setup(self, **instance):
        exp = self.experiment
        self.words: dict = exp["lang_keywords"]
        config = exp.get("common_config", {})
        self.max_rounds: int = config.get("n_turns", MAX_ROUNDS)
        self.max_reprompts: int = config.get("max_retry_per_error", {}).get("NOT_VALID_WORD_FOR_GAME", MAX_REPROMPTS)
        # 2.0 and official out-of-domain instance files carry their own word list; Playpen's files use the
        # packaged one of the game (wordle-crazy: the official list).
        official = self.words.get("official_words_list")
        if official:
            self.vocabulary = frozenset(official)
        elif rules.colour_scheme(self.game_spec.game_name) == "crazy":
            self.vocabulary = frozenset(rules.crazy_words())
        else:
            self.vocabulary = rules.allowed_words()
        self.target: str = instance["target_word"].strip().lower()
        self.clue: str = str(instance.get("target_word_clue", "")).strip()
        rules_variant = rules.variant(self.game_spec.game_name)
        self.use_clue = rules_variant in ("wordle_withclue", "wordle_withcritic")
        self.use_critic = rules_variant == "wordle_withcritic"
        self.version = game_version(self.game_spec)
        self.scheme = rules.colour_scheme(self.game_spec.game_name)

        self.guesser = ExpertPlayer(self.player_models[0], "Guesser",
                                    functools.partial(expert.guesser_response, scheme=self.scheme))
        if self.use_clue:
            self.add_player(self.guesser, initial_prompt=exp["guesser_prompt"],
                            initial_context=f"{self.words['clue_lang']} {self.clue}")
        else:
            self.add_player(self.guesser, initial_context=exp["guesser_prompt"])
        if self.use_critic:
            self.critic = ExpertPlayer(self.player_models[1], "Critic",
                                       functools.partial(expert.critic_response, scheme=self.scheme))
            self.add_player(self.critic, initial_prompt=exp["guesser_critic_prompt"])

        self.committed: list[str] = []  # guesses that were scored, one per round
        self.feedbacks: list[str] = []
        self.proposals: list[str] = []  # critic variant: first guess of each round
        self.agreements: list[str] = []
        self.reprompts = 0
        self.proposing = self.use_critic  # critic variant: the round's first guess goes to the critic
        self.round_committed = False
        self.next_up: Player = self.guesser

    # -------------------------------------------------------------------------------- responses

    def _parse_response(self, player: Player, response: str) -> tuple[str, str]:
        tag = self.words["agreement_lang"] if player is not self.guesser else self.words["guess_lang"]
        try:
            content, explanation = rules.parse_tagged_response(response, self.words["explanation_lang"], tag,
                                                                self.version)
        except rules.ResponseFormatError as e:
            raise ParseError(e.reason, response=response, key=e.key) from None
        if player is self.guesser:
            # a guess that is no five-letter word is a malformed response (a violated request, as in 2.0);
            # a well-formed word outside the list is a move the game answers with a re-prompt
            error = rules.guess_error(content, self.vocabulary)
            if error in ("INVALID_WORD", "INVALID_WORD_LENGTH"):
                raise ParseError(self.words["error_prompt_text"].get(error, error), response=response, key=error)
        return content, explanation

    def _on_parse_error(self, error: ParseError):
        self._abort(error.reason)

    def _advance_game(self, player: Player, parsed: tuple[str, str]):
        content, explanation = parsed
        if player is self.guesser:
            self._on_guess(content, explanation)
        else:
            self._on_critique(content, explanation)

    def _on_guess(self, guess: str, explanation: str):
        error = rules.guess_error(guess, self.vocabulary)
        if error == "NOT_VALID_WORD_FOR_GAME" and self.reprompts < self.max_reprompts:
            self.reprompts += 1
            self.log_to_self("metadata", f"'{guess}' is not in the word list: re-prompt {self.reprompts}")
            text = self.words["error_prompt_text"]
            retry = text.get("RETRY", "")
            self.set_context_for(self.guesser, f"{text[error]} {retry}".strip() + "\n\n" + self._format_reminder())
            self.next_up = self.guesser
            return
        if error is not None:
            raise GameError(self.words["error_prompt_text"].get(error, error), key=error)
        self.reprompts = 0
        if self.proposing:  # critic variant, first step of the round: ask the critic
            self.proposals.append(guess)
            self.proposing = False
            lines = [f"{self.words['clue_lang']} {self.clue}", f"{self.words['explanation_lang']} {explanation}",
                     f"{self.words['guess_lang']} {guess}"]
            content = "\n".join(lines)
            if self.proposals[:-1]:  # the critic's first message already explains the format
                content += "\n\n" + self._format_reminder(critic=True)
            self.set_context_for(self.critic, content)
            self.next_up = self.critic
            return
        self._commit(guess)

    def _commit(self, guess: str):
        colours = rules.letter_feedback(guess, self.target)
        feedback = rules.format_feedback(guess, colours, self.scheme)
        self.committed.append(guess)
        self.feedbacks.append(feedback)
        self.round_committed = True
        self.log_to_self("guess feedback", {"attempt": len(self.committed), "guess": guess, "feedback": feedback})
        if guess == self.target:
            self.state.succeed()
            self.log_to_self("correct guess", "game_result = WIN")
        elif len(self.committed) >= self.max_rounds:
            self.state.failed()
            self.log_to_self("incorrect guess", "game_result = LOSS")
        else:
            self.set_context_for(self.guesser, f"{self.words['guess_feedback_lang']} {feedback}\n\n"
                                 + self._format_reminder())
            self.proposing = self.use_critic
        self.next_up = self.guesser

    def _on_critique(self, agreement: str, explanation: str):
        if not agreement.isalpha() or agreement not in self.words["agreement_match_keywords_lang"]:
            raise GameError(f"The agreement must be one of {self.words['agreement_match_keywords_lang']}.",
                            key="NOT_VALID_CRITIC_WORD")
        self.agreements.append(agreement)
        self.set_context_for(self.guesser, "\n".join([
            f"{self.words['clue_lang']} {self.clue}",
            f"{self.words['guess_agreement_lang']} {agreement}",
            f"{self.words['agreement_explanation_lang']} {explanation}",
        ]) + "\n\n" + self._format_reminder())
        self.next_up = self.guesser

    def _on_game_error(self, error: GameError):
        self._abort(error.reason)

    def _abort(self, reason: str):
        self.state.abort()
        self.log_to_self("metadata", f"Error: {reason}")
        self.log_to_self("invalid format", "game_result = ABORT")

    def _format_reminder(self, critic: bool = False) -> str:
        w = self.words
        last = f"{w['agreement_lang']} {w['agreement_word_lang']}" if critic else f"{w['guess_lang']} {w['guess_word_lang']}"
        return f"{w['error_prompt_text']['INVALID_FORMAT']}\n{w['explanation_lang']} {w['explanataion_details_lang']}\n{last}"

    # ------------------------------------------------------------------------------ turn order

    def _should_pass_turn(self) -> bool:
        return self.next_up is not self.current_player

    def _next_player(self) -> Player:
        self._current_player_idx = self.get_players().index(self.next_up)
        return self.next_up

    def _start_next_round(self) -> bool:
        return self.round_committed

    def _on_before_round(self):
        self.round_committed = False

    def _on_after_game(self):
        log_outcome(self)
        self.log_key("target_word", self.target)
        self.log_key("guesses", self.committed)
        self.log_key("guess_feedbacks", self.feedbacks)
        if self.use_critic:
            self.log_key("proposals", self.proposals)
            self.log_key("critic_agreements", self.agreements)


class WordleScorer(GameScorer):
    """Main Score from the round of the winning guess; closeness and strategy per round."""

    def __init__(self, game_name: str, experiment: dict, game_instance: dict, version: str = VERSION_2_0):
        super().__init__(game_name, experiment, game_instance)
        self.version = version

    def compute_round_score(self, round_idx, round_events) -> None:
        pass  # per-round scores need the previous round, so compute_episode_scores logs them

    def compute_episode_scores(self, interactions: dict) -> None:
        scheme = rules.colour_scheme(self.game_name)
        feedbacks = [rules.parse_feedback(f, scheme) for f in interactions.get("guess_feedbacks", [])]
        for idx, (guess, colours) in enumerate(feedbacks):
            self.log_round_score(idx, "closeness score", rules.closeness(colours))
            if idx == 0:
                won_at_once = len(feedbacks) == 1 and all(c == "green" for c in colours)
                self.log_round_score(idx, "strategy score", 100 if won_at_once else 0)
            else:
                self.log_round_score(idx, "strategy score", rules.strategy(feedbacks[idx - 1], guess))
        for idx in range(len(feedbacks), len(interactions.get("turns", []))):  # a round that ended in an abort
            self.log_round_score(idx, "closeness score", math.nan)
            self.log_round_score(idx, "strategy score", math.nan)
            if "proposals" in interactions:
                self.log_round_score(idx, "change_of_opinion", math.nan)
        guesses = interactions.get("guesses", [])
        if interactions[METRIC_ABORTED]:
            score = repeats = math.nan
        else:
            repeats = len(guesses) - len(set(guesses))
            score = rules.main_score(self.game_name, len(guesses)) if interactions[METRIC_SUCCESS] else 0
        self.log_episode_score(BENCH_SCORE, score)
        if self.version == VERSION_2026:
            self.log_episode_score("Guess Repetitions", repeats)
        else:
            self.log_episode_score("repeats guess", repeats if math.isnan(repeats) else int(repeats > 0))
            self.log_episode_score("total guess repetitions", repeats)
        if "proposals" in interactions:
            self._score_critic_influence(interactions)

    def _score_critic_influence(self, interactions: dict) -> None:
        """How often the Guesser kept or changed its proposal after the Critic agreed or disagreed."""
        counts = {("yes", True): 0, ("yes", False): 0, ("no", True): 0, ("no", False): 0}
        rounds = zip(interactions["proposals"], interactions["guesses"], interactions["critic_agreements"])
        for idx, (proposal, final, agreement) in enumerate(rounds):
            counts[(agreement, proposal == final)] += 1
            self.log_round_score(idx, "change_of_opinion", int(proposal != final))
        aborted = interactions[METRIC_ABORTED] and not interactions["guesses"]
        for agreement, name in (("yes", "Agreement"), ("no", "Disagreement")):
            total = counts[(agreement, True)] + counts[(agreement, False)]
            kept = round(counts[(agreement, True)] / total, 2) if total else (math.nan if aborted else 0)
            changed = round(counts[(agreement, False)] / total, 2) if total else (math.nan if aborted else 0)
            self.log_episode_score(f"Repetition-Guesser-On-Critic-{name}", kept)
            self.log_episode_score(f"Non-Repetition-Guesser-On-Critic-{name}", changed)


class WordleBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> WordleGameMaster:
        return WordleGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> WordleScorer:
        return WordleScorer(self.game_name, experiment, game_instance, game_version(self.game_spec))
