"""The daemon: a cycle every --interval, the inventory on its own slower schedule, the last
finished cycle published for /metrics, alerts delivered, state saved.

The jobs (the cycle, the inventory, the retry of failed accounts) each run on a thread of their
own, scheduled on the monotonic clock (`schedule.every`), so that a step of the wall clock
neither stalls nor bunches them: an inventory refresh (Describe calls
over a whole account) never holds up a cycle, which goes on with the inventory it has and
takes the new one whole at its next start. Neither job overlaps itself; missed runs are
skipped and the first run starts after a little jitter. A cycle
that fails (AWS unreachable, a throttled call, a bug) is logged and counted, and the next one
runs as planned; that includes its conclusion (the alert book's update, publication, the save,
delivery), so that no value in the state file can stop alerting: a conclusion that fails while
the book still holds what the state file gave sets the file aside, and the next cycle starts
from an empty book. SIGTERM lets the running cycle finish, then the process exits 0.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from types import FrameType

import structlog

from analyzer.act.ledger import Ledger
from analyzer.analyze import prices
from analyzer.analyze.alerts import Alert, AlertBook
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.rules import RuleSet
from analyzer.collect import regions
from analyzer.collect.accounts import Account
from analyzer.collect.regions import Region
from analyzer.deliver import alertmanager, statefile
from analyzer.deliver import savings as savings_report
from analyzer.deliver.exporter import Published, Weighed, exposition_for
from analyzer.deliver.interactions import Interactions, section
from analyzer.deliver.notify import Channel, Dispatcher, channel_for
from analyzer.deliver.seen import Seen
from analyzer.deliver.server import Exposition, Server
from analyzer.deliver.slack import DeliveryError
from analyzer.deliver.telemetry import Telemetry
from analyzer.errors import ConfigError
from analyzer.live.approvals import Approvals, approvals_for, report_unsettled
from analyzer.live.cycle import Analyzer, CycleResult
from analyzer.live.fleet_savings import min_headroom
from analyzer.live.heap import Heap
from analyzer.live.long_pasts import LongPasts
from analyzer.live.proofs import Proofs
from analyzer.live.schedule import StepWatch, every
from analyzer.model.costs import Projection
from analyzer.model.metrics import Tier
from analyzer.settings import Settings

log = structlog.get_logger(__name__)

Clock = Callable[[], datetime]
MAX_JITTER_S = 10.0
STOP_GRACE_S = 10.0
"""On SIGTERM, how long the server's requests, a click being applied and a running cycle may
take to finish, together, before they are abandoned: half the manifests' 20 s grace period
(`terminationGracePeriodSeconds`), the rest for saving the state and exiting."""
STUCK_AFTER_S = 1800.0
"""`/livez` allows at least this long without a cycle ending: a first backfill of a large
account takes minutes."""
DIGEST_EVERY_S = 7 * 86_400.0
DIGEST_RETRY_S = 3600.0
MAX_DEFERRAL_S = 3600.0
"""A receiver's deadline read back from the state file is honoured up to this far ahead: a
stored time never silences the channel for long."""


class StepFailed(Exception):
    """A step of a cycle's conclusion raised: which step, and the error."""

    def __init__(self, step: str, error: Exception) -> None:
        super().__init__(f"{step}: {str(error) or type(error).__name__}")
        self.step = step
        self.error = error


@contextmanager
def _step(name: str) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        raise StepFailed(name, exc) from exc


def utc_now() -> datetime:
    return datetime.now(UTC)


def _ticks_of(clock: Clock) -> Callable[[], float]:
    """Health ages on the monotonic clock for the real wall clock, which steps (NTP, a VM
    restored from a snapshot): a step back made every age negative, and a stuck daemon
    alive. A simulated or test clock is its own: it never steps, and it may run faster."""
    if clock is utc_now:
        return time.monotonic
    return lambda: clock().timestamp()


class Daemon:
    def __init__(
        self,
        settings: Settings,
        analyzer: Analyzer,
        book: AlertBook,
        dispatcher: Dispatcher,
        telemetry: Telemetry,
        clock: Clock = utc_now,
        ticks: Callable[[], float] | None = None,
    ) -> None:
        self.settings = settings
        self.analyzer = analyzer
        self.book = book
        self.dispatcher = dispatcher
        self.telemetry = telemetry
        self.clock = clock
        self._ticks = ticks or _ticks_of(clock)
        """Seconds on a clock that never steps: what health ages are read on."""
        self._published: Published | None = None
        self._last_success: float | None = None
        self._started = self._ticks()
        self._last_end: float | None = None
        """When a cycle last ended as planned (concluded, or failed reading AWS): `/livez`
        fails when none has for long."""
        self._failure: str | None = None
        """Why the last cycle failed, for `/readyz`; None when it did not."""
        self._restored: list[Alert] = []
        """The alerts the state file gave: while the book holds one, a failing conclusion
        may be the file's doing."""
        self._saved_not_before: datetime | None = None
        self._cycles = 0
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._book_lock = threading.Lock()
        """Held while a cycle changes, delivers and saves the book: a stop saves it only
        between those."""
        self.alertmanager: alertmanager.Alertmanager | None = None
        """Where the firing alerts are posted after every cycle, beside the channel."""
        self.ledger = Ledger()
        """The attempts to apply fixes, kept in the state file."""
        self.slack_seen = Seen()
        """The signed Slack requests seen lately, kept in the state file: a request sent
        again after a restart is still known."""
        self.approvals: Approvals | None = None
        """Fixes applied on a click, or by the policy of `apply_automatically`."""
        self.interactions: Interactions | None = None
        """What takes Slack's clicks on Apply buttons, where approvals are set up."""
        self.long_pasts: LongPasts | None = None
        """What each volume's longest past showed, read a stretch a day, kept in the state
        file: the fleet's savings (`live/long_pasts.py`)."""
        self.savings_digest_at: datetime | None = None
        """When the weekly savings digest was last posted."""
        self._digest_tried: float | None = None
        self.exit: Callable[[int], None] = os._exit
        """How a stop ends the process when a cycle it abandoned would hold the exit."""
        if analyzer.accounts.configured:
            analyzer.accounts.listeners.append(
                lambda account, outcome: telemetry.account_checked(
                    account.id, account.name or "", outcome
                )
            )

    # --- what the HTTP endpoints read -----------------------------------------------------

    def published(self) -> Published | None:
        return self._published

    def ready(self) -> tuple[bool, str]:
        """Ready once a cycle has produced usable data (not every metric failed) within the
        last three intervals. Not ready says why: what the last cycle failed at, where it
        failed."""
        why = f"; the last cycle failed {self._failure}" if self._failure else ""
        if self._last_success is None:
            return False, f"not ready: no cycle has produced usable data yet{why}"
        age = self._ticks() - self._last_success
        allowed = 3 * self.settings.interval + 60
        if age > allowed:
            return False, f"not ready: the last cycle with usable data was {age:.0f} s ago{why}"
        return True, "ready"

    def live(self) -> tuple[bool, str]:
        """Alive while cycles end as planned: those that fail reading AWS too (a CloudWatch
        outage is no reason to restart). Not alive when none has for ten intervals, and at
        least `STUCK_AFTER_S` (30 minutes, for a first backfill): the scheduler is stuck, a
        cycle hangs, or every conclusion fails (a bug the state file set aside did not
        explain); a restart is what helps, so the orchestrator is told."""
        since = self._last_end if self._last_end is not None else self._started
        age = self._ticks() - since
        allowed = max(10 * self.settings.interval, STUCK_AFTER_S)
        if age > allowed:
            what = "no cycle has ended" if self._last_end is None else "the last cycle ended"
            return False, f"not alive: {what} {age:.0f} s ago (allowed {allowed:.0f} s)"
        return True, "alive"

    # --- the jobs -------------------------------------------------------------------------

    def cycle(self) -> bool:
        """One analysis cycle; False if it failed (the daemon goes on)."""
        self._idle.clear()
        try:
            return self._cycle()
        finally:
            self._idle.set()

    def _cycle(self) -> bool:
        now = self.clock()
        if not self.analyzer.inventories():
            # No inventory yet (the first cycle, or every refresh so far failed): a Describe
            # failure is the inventory's, counted and alerted as such, not CloudWatch's.
            error = self.refresh_inventory()
            if error is not None:
                self._failed(StepFailed("describing the inventory", error), exc_info=False)
                self._last_end = self._ticks()
                return False
        try:
            alerted = {(a.finding.resource.scope, a.resource_id) for a in self.book}
            steady = self.book.steady(self.analyzer.rules.daily())
            result = self.analyzer.run(now, alerted, steady)
        except Exception as exc:
            self._failed(StepFailed("reading AWS", exc), exc_info=not hasattr(exc, "exit_code"))
            self._last_end = self._ticks()
            return False
        if self.analyzer.proofs is not None:
            try:
                result = self.analyzer.proven(result, now, alerted)
            except Exception as exc:
                # The past is evidence for the fixes, never a reason to hold an alert back.
                log.error("past.failed", error=str(exc) or type(exc).__name__, exc_info=exc)
        self._cycles += 1
        if self.long_pasts is not None:
            self._read_long_pasts(now, result)
        with self._book_lock:
            try:
                self._conclude(now, result)
            except StepFailed as failed:
                self._failed(failed, exc_info=True)
                self._set_state_aside(failed)
                return False
        self._last_end = self._ticks()
        self._post_digest(now)
        if self.approvals is not None and self.approvals.automatic:
            try:
                self.approvals.apply_automatically(self.book.firing())
            except Exception as exc:  # a fix is never a reason for the cycle to fail
                log.error("apply.failed", error=str(exc) or type(exc).__name__, exc_info=exc)
        return True

    def _read_long_pasts(self, now: datetime, result: CycleResult) -> None:
        """The long pasts due read, billed with the cycle's other reads, and the savings
        weighed again where they changed; a failure is logged, never the cycle's."""
        assert self.long_pasts is not None
        analyzer = self.analyzer
        try:
            stats = self.long_pasts.step(
                analyzer.inventories(),
                lambda where: analyzer.scopes.at(where).metrics,
                self.settings,
                analyzer.price_list or prices.load(self.settings.prices),
                min_headroom(analyzer.rules),
                now,
                self.settings.interval,
                reading=self._cycles > 1,  # not beside the first cycle's backfill
                offers=analyzer.offers,
            )
        except Exception as exc:  # savings are never a reason for a cycle to fail
            log.error("savings.failed", error=str(exc) or type(exc).__name__, exc_info=exc)
            return
        result.snapshot.stats.past_requested += stats.metrics_requested
        result.snapshot.stats.requests.update(stats.requests)
        path = self.settings.state_file
        if path is not None and self.long_pasts.changed:
            try:
                statefile.save_long_pasts(path, self.long_pasts.encoded())
            except OSError as exc:
                self.telemetry.state_saved(ok=False)
                log.error(
                    "state.save_failed",
                    path=str(statefile.long_pasts_path(path)),
                    error=exc.strerror or str(exc),
                )

    def weighed(self) -> Weighed | None:
        """The savings offered, and how far the volumes' long pasts are read; None where
        they are not read (a node's NVMe statistics hold no long past)."""
        if self.long_pasts is None:
            return None
        inventories = self.analyzer.inventories()
        return self.long_pasts.savings(), self.long_pasts.counts(inventories)

    def _post_digest(self, now: datetime) -> None:
        """The weekly savings digest, where alerts go to Slack (or the demo's console): the
        first once no more than one volume in ten is still being read, then a week after the
        last one posted. A failure is tried again an hour later, and never holds an alert nor
        fails a cycle. What is cheap to tell is told first: the savings are gathered (sorted,
        the fleet's volumes counted) only in a cycle that may post."""
        if (
            self.long_pasts is None
            or self.settings.savings_digest != "weekly"
            # Slack, or the demo's console; not the log (no webhook, or a dry run).
            or self.dispatcher.channel.name not in ("slack", "console")
        ):
            return
        last = self.savings_digest_at
        if last is not None and (now - last).total_seconds() < DIGEST_EVERY_S:
            return
        ticks = self._ticks()
        if self._digest_tried is not None and ticks - self._digest_tried < DIGEST_RETRY_S:
            return
        shown = self.weighed()
        if shown is None:
            return
        found, counts = shown
        if last is None and (
            counts["weighed"] == 0 or counts["reading"] > sum(counts.values()) / 10
        ):
            return
        self._digest_tried = ticks
        currency = self.analyzer.price_list.currency if self.analyzer.price_list else "USD"
        try:
            message = savings_report.digest(found, counts, currency, self.dispatcher.apply)
            self.dispatcher.channel.send(message, [], now)
        except Exception as exc:  # Slack refusing, or a bug: the alerts go on
            log.warning("savings.digest_failed", error=str(exc) or type(exc).__name__)
            return
        log.info("savings.digest_posted", savings=len(found), weighed=counts["weighed"])
        self.savings_digest_at = now
        self.save_state()

    def announce(self, lines: list[str]) -> None:
        """A fix applied by the policy, said where alerts go; a failure to say it is logged
        (the attempt is in the log already)."""
        text = "\n".join(lines)[:3000]
        message = {"text": text, "blocks": [section(text)]}
        try:
            self.dispatcher.channel.send(message, [], self.clock())
        except DeliveryError as exc:
            log.warning("apply.announce_failed", error=str(exc))

    def _failed(self, failed: StepFailed, exc_info: bool) -> None:
        """One log line and one count for a cycle that failed, and the reason `/readyz`
        gives (the step and the error's type: its text, which may quote a URL, stays in the
        log)."""
        self.telemetry.cycle_failed(metrics=failed.step != "describing the inventory")
        self._failure = f"{failed.step} ({type(failed.error).__name__})"
        log.error(
            "cycle.failed",
            step=failed.step,
            error=str(failed.error) or type(failed.error).__name__,
            exc_info=failed.error if exc_info else False,
        )

    def _conclude(self, now: datetime, result: CycleResult) -> None:
        """The cycle's findings into the book, published, saved and delivered; StepFailed
        names the step that raised (the ones after it do not run)."""
        with _step("updating the alert book"):
            self.book.update(now, result.findings, result.pending, result.unknown, result.reading)
        with _step("publishing"):
            self._published = Published.of(result.readings, self.book.firing(), self.weighed())
        # Saved before sending (what is owed survives a crash) and after each message sent
        # (a crash sends again at most the one in flight), and once more where the receiver
        # asked to wait (the wait survives a restart).
        with _step("saving the state"):
            self._save_state()
        with _step("delivering"):
            self.dispatcher.deliver(self.book, now, self._save_state)
            if self.dispatcher.not_before != self._saved_not_before:
                self._save_state()
        if self.alertmanager is not None:
            with _step("posting to Alertmanager"):
                self.alertmanager.push(self.book, now, result.reading)
        # Counted once the cycle has concluded: a conclusion that fails counts as failed.
        stats = result.snapshot.stats
        if stats.outcome != "failed":
            self._last_success = self._ticks()
        self._failure = "reading metrics (every read failed)" if stats.outcome == "failed" else None
        self.telemetry.cycle_done(stats, result.duration_s, now, backfill=self._cycles == 1)
        if result.projection is not None:
            self.telemetry.projected_bill(result.projection)
            if self.analyzer.accounts.configured:
                self._account_bills()
            if self._cycles == 1:
                _log_bill(result.projection)

    def restore(self, state: statefile.State) -> None:
        """Take in what the state file kept: the alerts, and the receiver's deadline (up to
        `MAX_DEFERRAL_S` ahead)."""
        now = self.clock()
        for alert in state.alerts:
            _not_after(alert, now)
        self.book.restore(state.alerts)
        self.ledger = Ledger(state.applied)
        # Slack's timestamps are the wall clock's, whatever clock the cycles run on.
        self.slack_seen = Seen.from_records(state.slack_seen, time.time())
        self._restored = list(self.book)
        self._saved_not_before = state.not_before
        self.savings_digest_at = state.savings_digest_at
        not_before = state.not_before
        latest = self.clock() + timedelta(seconds=MAX_DEFERRAL_S)
        if not_before is not None and not_before > latest:
            log.warning(
                "state.deadline_bounded",
                not_before=not_before.isoformat(),
                bounded_to=latest.isoformat(),
            )
            not_before = latest
        self.dispatcher.not_before = not_before

    def _set_state_aside(self, failed: StepFailed) -> None:
        """A conclusion failed while the book held alerts the state file gave: the file may
        be why (a value that validation let through), and a restart would load it again. It
        is set aside like an unreadable one, and the next cycle starts from an empty book."""
        restored = {id(a) for a in self._restored}
        if not any(id(a) in restored for a in self.book):
            return
        self.book.restore([])
        self._restored = []
        path = self.settings.state_file
        if path is not None:
            statefile.set_aside(path, f"cycles fail on it: {failed}")

    def save_state(self) -> None:
        """Write the state file from outside a cycle (an applied fix's record): after the
        cycle that is concluding, if one is."""
        with self._book_lock:
            self._save_state()

    def _save_state(self) -> None:
        path = self.settings.state_file
        if path is None:
            return
        not_before = self.dispatcher.not_before
        try:
            statefile.save(
                list(self.book),
                path,
                not_before,
                self.ledger,
                self.slack_seen.records(),
                self.savings_digest_at,
            )
        except OSError as exc:
            self.telemetry.state_saved(ok=False)
            log.error("state.save_failed", path=str(path), error=exc.strerror or str(exc))
            return
        self._saved_not_before = not_before
        self.telemetry.state_saved(ok=True)

    def _account_bills(self) -> None:
        inventories = self.analyzer.inventories()
        bills = {}
        for where, dollars in self.analyzer.bill.by_scope.items():
            inv = inventories.get(where)
            if inv is not None:
                bills[(inv.account_id, inv.account_name, inv.region)] = dollars
        self.telemetry.account_bills(bills)

    def retry_accounts(self) -> None:
        """Describe again the failing accounts whose time has come (their own schedule,
        apart from the inventory's); a failure is that account's, counted and logged."""
        try:
            self.analyzer.retry_accounts()
        except Exception as exc:
            log.error("account.retry_failed", error=str(exc) or type(exc).__name__)

    def refresh_inventory(self) -> Exception | None:
        """Describe every region again, counted by outcome; the error, if it failed."""
        try:
            self.analyzer.refresh_inventory()
        except Exception as exc:
            self.telemetry.inventory_refreshed(ok=False)
            log.error("inventory.failed", error=str(exc) or type(exc).__name__)
            return exc
        self.telemetry.inventory_refreshed(ok=True)
        return None

    # --- running --------------------------------------------------------------------------

    def stop(self, signum: int | None = None, _frame: FrameType | None = None) -> None:
        if signum is not None:
            log.info("daemon.stopping", signal=signal.Signals(signum).name)
        self._stop.set()

    def run(self, server: Server, speed: float = 1.0) -> int:
        """Serve and schedule until SIGTERM. `speed` > 1 runs the schedule faster than real
        time (the demo's simulated clock runs at the same speed)."""
        server.start()
        interval = self.settings.interval / speed
        first = random.uniform(0, min(MAX_JITTER_S, interval))
        heap = Heap()
        steps = StepWatch(self.clock, scale=speed)

        def cycle() -> None:
            steps.check()
            try:
                self.cycle()
            finally:
                heap.after_cycle()

        # On the monotonic clock: a step of the wall clock neither stalls nor bunches them.
        every("cycle", interval, cycle, first, self._stop)
        inventory_s = self.settings.inventory_interval / speed
        every("inventory", inventory_s, self.refresh_inventory, inventory_s, self._stop)
        if self.analyzer.accounts.configured:
            every("accounts", interval, self.retry_accounts, interval, self._stop)
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self.stop)
        log.info(
            "daemon.started",
            listen=f"{self.settings.listen_address[0]}:{server.port}",
            interval_s=self.settings.interval,
            regions=self.analyzer.scopes.regions(),
            channel=self.dispatcher.channel.name,
        )
        self._stop.wait()
        # One grace for all that is finishing at once (the server's requests, a click, the
        # cycle), so that the whole stop stays within the orchestrator's grace period.
        deadline = time.monotonic() + STOP_GRACE_S

        def left() -> float:
            return max(deadline - time.monotonic(), 0.0)

        if self.approvals is not None:
            # A click being applied ends its read-back, records and says its outcome, then
            # the process goes: within the orchestrator's grace, never killed mid-record.
            self.approvals.stopping.set()
        # The server lets the requests being answered finish, and its worker threads hold the
        # interpreter's exit: one that never finishes (a scrape stuck in a write) would keep
        # the process alive past Kubernetes' grace period. Its stop gets the grace too.
        stopping = threading.Thread(target=server.stop, name="http-stop", daemon=True)
        stopping.start()
        stopping.join(left())
        if self.approvals is not None and not self.approvals.finish(left()):
            log.warning("daemon.click_abandoned", waited_s=STOP_GRACE_S)
        if stopping.is_alive():
            log.warning("daemon.server_stuck", waited_s=STOP_GRACE_S)
        elif self._idle.wait(left()):
            log.info("daemon.stopped", cycles=self._cycles)
            return 0
        else:
            log.warning("daemon.cycle_abandoned", waited_s=STOP_GRACE_S)
        # A cycle still runs (a CloudWatch call that hangs), or the server does: abandon it.
        # The book is saved unless the cycle is delivering right now; then the last save
        # stands and at most the message in flight is sent again after the restart.
        saved = self._book_lock.acquire(timeout=1.0)
        if saved:
            try:
                self._save_state()
            finally:
                self._book_lock.release()
        log.info("daemon.stopped", cycles=self._cycles, state_saved=saved)
        sys.stderr.flush()
        self.exit(0)
        return 0


def _not_after(alert: Alert, now: datetime) -> None:
    """A stored time later than now (a clock gone wrong, a hand edit) read as now: a
    `last_sent` in the future would hold back every repeat of its alert until then."""
    late = {
        name: moment
        for name in ("since", "firing_since", "absent_since", "last_sent")
        if (moment := getattr(alert, name)) is not None and moment > now
    }
    if not late:
        return
    log.warning(
        "state.future_time",
        rule=alert.rule,
        resource=alert.resource_id,
        **{name: moment.isoformat() for name, moment in late.items()},
    )
    for name in late:
        setattr(alert, name, now)


def _log_bill(projection: Projection) -> None:
    log.info(
        "billing.projected",
        dollars_per_month=round(projection.dollars(), 2),
        metrics_per_month=round(projection.total_metrics),
        **{f"{tier.value}_dollars": round(projection.dollars(tier), 2) for tier in Tier},
    )


def build(
    settings: Settings,
    ruleset: RuleSet,
    connect: Callable[[str], Region] | None = None,
    clock: Clock = utc_now,
    process_metrics: bool = True,
    fallback: Channel | None = None,
    server: Server | None = None,
    connect_account: Callable[[Account, str], Region] | None = None,
    past: bool = True,
) -> tuple[Daemon, Server]:
    """The daemon and its HTTP server, wired from the settings; `server`, if given, already
    holds the address (`bind`). The address is taken first: a busy port is said before any
    AWS call. `past`: weigh the alerts' fixes on their resources' last fourteen days
    (`live/proofs.py`), where the regions are read from CloudWatch."""
    server = server or bind(settings)
    try:
        daemon, exposition = _wire(
            settings, ruleset, connect, clock, process_metrics, fallback, connect_account, past
        )
    except BaseException:
        server.stop()
        raise
    actions = daemon.interactions.handle if daemon.interactions is not None else None
    server.answer_with(exposition, daemon.ready, daemon.live, actions)
    return daemon, server


def bind(settings: Settings) -> Server:
    """The HTTP server on the settings' address, answering "starting" until wired."""
    host, port = settings.listen_address
    try:
        return Server.bound(host, port)
    except OSError as exc:
        raise ConfigError(f"--listen {settings.listen}: {exc.strerror or exc}") from None


def _wire(
    settings: Settings,
    ruleset: RuleSet,
    connect: Callable[[str], Region] | None,
    clock: Clock,
    process_metrics: bool,
    fallback: Channel | None,
    connect_account: Callable[[Account, str], Region] | None = None,
    past: bool = True,
) -> tuple[Daemon, Exposition]:
    price_list = prices.load(settings.prices)
    analyzer = Analyzer(
        settings,
        ruleset,
        connect=connect or regions.connect,
        connect_account=connect_account,
        clock=clock,
        price_list=price_list,
        adaptive=settings.polling == "adaptive",
        proofs=Proofs() if past else None,
    )
    analyzer.offering()
    analyzer.scopes.regions()  # no region at all is a configuration error: say so before starting
    book = AlertBook(settings.repeat_interval, settings.resolve_after, settings.notify_severity)
    if settings.state_file is not None:
        try:
            statefile.check_writable(settings.state_file)
        except OSError as exc:
            raise ConfigError(
                f"state_file {settings.state_file}: cannot be written: {exc.strerror or exc}"
            ) from None
    holder: list[Daemon] = []
    exposition, telemetry = exposition_for(
        lambda: holder[0].published() if holder else None, process_metrics=process_metrics
    )
    telemetry.price_per_metric = price_list.cloudwatch_per_1000_metrics / 1000
    if settings.budget is not None:
        telemetry.budget_set(settings.budget)
    shard = settings.sharding()  # no ordinal to take a shard from: say so before starting
    if not shard.whole:
        telemetry.sharded(shard.index, shard.total)
    channel = channel_for(settings.webhook_url(), settings.dry_run, fallback, settings.interval)
    telemetry.expect_channel(channel.name)
    daemon = Daemon(
        settings, analyzer, book, Dispatcher(channel, telemetry.notified), telemetry, clock
    )
    if settings.alertmanager_url and not settings.dry_run:
        telemetry.expect_channel(alertmanager.CHANNEL)
        daemon.alertmanager = alertmanager.Alertmanager(
            settings.alertmanager_url,
            settings.interval,
            telemetry.notified,
            settings.runbook_url,
            timeout_s=max(min(10.0, settings.interval / 4), 1.0),
        )
    if settings.state_file is not None:
        daemon.restore(statefile.load_state(settings.state_file))
    if past:
        kept = statefile.load_long_pasts(settings.state_file) if settings.state_file else None
        daemon.long_pasts = LongPasts.from_records(kept, clock())
    report_unsettled(daemon.ledger, daemon.announce, daemon.save_state)
    daemon.approvals = approvals_for(
        settings,
        analyzer.scopes,
        daemon.ledger,
        telemetry.apply_attempted,
        daemon.save_state,
        clock,
        Catalog(price_list, analyzer.offers),
        daemon.announce,
        book.firing,
    )
    secret = settings.signing_secret()
    if daemon.approvals is not None and secret is not None:
        daemon.interactions = Interactions(
            secret, daemon.approvals.click, seen=daemon.slack_seen, changed=daemon.save_state
        )
        daemon.dispatcher.buttons = daemon.approvals.offer
    holder.append(daemon)
    return daemon, exposition
