#!/usr/bin/env python3
"""A chime executor in Python, with only the standard library.

It speaks the executor protocol of the OpenAPI document the server serves
at /api/openapi.json (operations registerExecutor, executorHeartbeat,
pollExecutor, appendExecutorLogs, reportExecutorResult): it registers as an
executor of a group, sends heartbeats, long-polls for runs, runs each with
its handler in a thread, sends the run's log lines while it runs, and
reports the result under the run's fencing token.

Handlers:
  py.echo   prints its parameters and logs a line; for an item of a
            sharded firing, it prints "shard: INDEX/TOTAL" first;
  py.sleep  waits for its "seconds" parameter (default 1), or until the
            server asks to stop the run (a kill or a timeout);
  py.fail   fails with its "message" parameter.

Create a token of role executor for the group first, as an admin:

    chime tokens create --name py-executor --role executor --group billing
    CHIME_TOKEN=chime_... python3 examples/python-executor/executor.py \
        --server http://127.0.0.1:8080 --group billing

SIGINT or SIGTERM stops it: it takes no new run, asks the running ones to
stop, reports their results and exits.
"""

import argparse
import datetime
import json
import os
import re
import signal
import socket
import sys
import threading
import time
import urllib.error
import urllib.request

LOG_INTERVAL = 0.4  # seconds between two sends of a run's new log lines
POLL_WAIT = "10s"


class APIError(Exception):
    """An answer of the server other than 2xx: status and the error body."""

    def __init__(self, status, body):
        super().__init__(f"{status}: {body.get('code', '')}: {body.get('message', '')}")
        self.status = status
        self.body = body


class Client:
    """Sends the protocol's requests, JSON in and out, with the token."""

    def __init__(self, server, token):
        self.server = server.rstrip("/")
        self.token = token

    def post(self, path, body, timeout=15):
        data = json.dumps(body).encode()
        req = urllib.request.Request(
            self.server + path, data=data, method="POST",
            headers={"Authorization": "Bearer " + self.token, "Content-Type": "application/json",
                     "User-Agent": "chime-python-executor"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read()
                return json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            try:
                payload = json.loads(e.read() or b"{}")
            except ValueError:
                payload = {}
            raise APIError(e.code, payload) from None


def parse_duration(s):
    """Parses a Go duration such as "15s", "1m30s" or "500ms" into seconds."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
    total = 0.0
    for value, unit in re.findall(r"([0-9.]+)(ms|us|µs|ns|h|m|s)", s or ""):
        total += float(value) * units[unit]
    return total


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


class Run:
    """One run handed to this executor: what a handler gets."""

    def __init__(self, wire):
        self.id = wire["id"]
        self.token = wire["token"]
        self.execution_id = wire["execution_id"]
        self.handler = wire["handler"]
        self.job_key = f"{wire['job_group']}.{wire['job_name']}"
        self.attempt = wire.get("attempt", 1)
        self.params = wire.get("params") or {}
        # An item of a sharded firing: its index (from 0) among the
        # firing's shard_total items; both 0 for a run that is not one.
        self.shard_index = wire.get("shard_index", 0)
        self.shard_total = wire.get("shard_total", 0)
        self.stop = threading.Event()  # set when the server asks to stop the run
        self.output = []
        self.lines = []  # every line logged, numbered by position from 1
        self.sent = 0  # lines the server acknowledged live
        self.lock = threading.Lock()

    def log(self, message, level="INFO", **attrs):
        line = {"time": now_rfc3339(), "level": level, "message": message}
        if attrs:
            line["attrs"] = attrs
        with self.lock:
            if len(self.lines) < 1000:
                self.lines.append(line)
        print(f"{level} run={self.id} {message} {attrs}", file=sys.stderr, flush=True)

    def print(self, text):
        self.output.append(text)

    def unsent(self):
        with self.lock:
            return [dict(line, seq=i + 1) for i, line in enumerate(self.lines) if i >= self.sent]

    def mark_sent(self, seq):
        with self.lock:
            self.sent = max(self.sent, seq)


def echo(run):
    run.log("echoing", params=run.params)
    if run.shard_total > 0:
        run.print(f"shard: {run.shard_index}/{run.shard_total}\n")
    run.print(json.dumps(run.params, sort_keys=True))


def sleep(run):
    seconds = float(run.params.get("seconds", 1))
    run.log("sleeping", seconds=seconds)
    if run.stop.wait(seconds):
        raise InterruptedError("the server asked to stop the run")
    run.log("slept", seconds=seconds)
    run.print(f"slept {seconds:g}s")


def fail(run):
    raise RuntimeError(run.params.get("message", "the job failed"))


HANDLERS = {"py.echo": echo, "py.sleep": sleep, "py.fail": fail}


class Executor:
    def __init__(self, client, group, instance, labels, version):
        self.client = client
        self.group = group
        self.instance = instance
        self.labels = labels
        self.version = version
        self.id = None
        self.running = {}  # run ID -> Run
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.lease_lost = threading.Event()

    def register(self):
        backoff = 0.5
        while not self.stopping.is_set():
            try:
                reg = self.client.post("/api/v1/executors", {
                    "group": self.group, "instance": self.instance, "version": self.version,
                    "labels": self.labels, "handlers": sorted(HANDLERS)})
                self.id = reg["id"]
                info(f"registered as executor {self.id} of group {self.group}, lease {reg['lease']}")
                return parse_duration(reg["heartbeat_interval"]) or 5
            except APIError as e:
                if e.status < 500:
                    raise
                info(f"cannot register ({e}); trying again")
            except OSError as e:
                info(f"cannot register ({e}); trying again")
            self.stopping.wait(backoff)
            backoff = min(backoff * 2, 10)
        return None

    def refs(self):
        with self.lock:
            return [{"id": r.id, "token": r.token} for r in self.running.values()]

    def cancel(self, refs):
        with self.lock:
            for ref in refs or []:
                run = self.running.get(ref["id"])
                if run is not None and run.token == ref["token"]:
                    info(f"the server asked to stop run {run.id}")
                    run.stop.set()

    def heartbeats(self, interval, done):
        while not done.wait(interval):
            try:
                reply = self.client.post(f"/api/v1/executors/{self.id}/heartbeat", {"running": self.refs()})
                self.cancel(reply.get("cancel"))
            except APIError as e:
                if e.status in (404, 409):
                    info("the server refused the heartbeat: the lease lapsed; stopping the runs")
                    self.lease_lost.set()
                    with self.lock:
                        for run in self.running.values():
                            run.stop.set()
                    return
                info(f"heartbeat failed: {e}")
            except OSError as e:
                info(f"heartbeat failed: {e}")

    def poll(self):
        while not self.stopping.is_set() and not self.lease_lost.is_set():
            try:
                work = self.client.post(f"/api/v1/executors/{self.id}/poll",
                                        {"wait": POLL_WAIT, "max": 5}, timeout=parse_duration(POLL_WAIT) + 15)
            except APIError as e:
                if e.status in (404, 409):
                    self.lease_lost.set()
                    return
                info(f"poll failed: {e}")
                self.stopping.wait(1)
                continue
            except OSError as e:
                info(f"poll failed: {e}")
                self.stopping.wait(1)
                continue
            self.cancel(work.get("cancel"))
            for wire in work.get("runs") or []:
                run = Run(wire)
                with self.lock:
                    self.running[run.id] = run
                threading.Thread(target=self.execute, args=(run,), name=f"run-{run.id}").start()

    def send_logs(self, run, done):
        while not done.wait(LOG_INTERVAL):
            lines = run.unsent()
            if not lines:
                continue
            try:
                self.client.post(f"/api/v1/executors/{self.id}/runs/{run.id}/log",
                                 {"token": run.token, "lines": lines})
                run.mark_sent(lines[-1]["seq"])
            except APIError as e:
                if e.status == 409:
                    info(f"the server refused run {run.id}'s log lines: it is no longer leased to this executor")
                    return
                info(f"cannot send run {run.id}'s log lines: {e}")
            except OSError as e:
                info(f"cannot send run {run.id}'s log lines: {e}")

    def execute(self, run):
        done = threading.Event()
        sender = threading.Thread(target=self.send_logs, args=(run, done), name=f"logs-{run.id}")
        sender.start()
        result = {"token": run.token, "outcome": "succeeded"}
        try:
            handler = HANDLERS.get(run.handler)
            if handler is None:
                raise LookupError(f"executor {self.instance} has no handler {run.handler!r}")
            handler(run)
        except Exception as e:  # the handler's failure is the run's
            result["outcome"] = "cancelled" if run.stop.is_set() else "failed"
            result["error"] = str(e) or type(e).__name__
        finally:
            done.set()
            sender.join()
        result["output"] = "".join(run.output)
        result["logs"] = [dict(line) for line in run.lines]
        try:
            self.client.post(f"/api/v1/executors/{self.id}/runs/{run.id}/result", result)
        except APIError as e:
            info(f"the server refused run {run.id}'s result: {e}")
        except OSError as e:
            info(f"cannot report run {run.id}'s result: {e}")
        finally:
            with self.lock:
                del self.running[run.id]

    def serve(self):
        """Serves registrations until stopped, registering again after a lost lease."""
        while not self.stopping.is_set():
            interval = self.register()
            if interval is None:
                return
            self.lease_lost.clear()
            beats_done = threading.Event()
            beats = threading.Thread(target=self.heartbeats, args=(interval, beats_done), name="heartbeats")
            beats.start()
            self.poll()
            if self.stopping.is_set():
                with self.lock:
                    for run in self.running.values():
                        run.stop.set()
                while self.refs():  # heartbeats keep the lease while the runs report
                    time.sleep(0.1)
            beats_done.set()
            beats.join()


def info(message):
    print(f"chime-python-executor: {message}", file=sys.stderr, flush=True)


def main():
    p = argparse.ArgumentParser(description="A chime executor in Python.")
    p.add_argument("--server", default="http://127.0.0.1:8080", help="the chime server's URL")
    p.add_argument("--token", default=os.environ.get("CHIME_TOKEN", ""),
                   help="a token of role executor serving the group (default $CHIME_TOKEN)")
    p.add_argument("--group", default="billing", help="the executor group to serve")
    p.add_argument("--instance", default=f"{socket.gethostname()}-{os.getpid()}-py", help="this process's name")
    p.add_argument("--labels", default="", help="labels jobs may require, as k=v,k=v")
    args = p.parse_args()
    if not args.token:
        p.error("--token or $CHIME_TOKEN is required")
    labels = {}
    for kv in filter(None, args.labels.split(",")):
        k, sep, v = kv.partition("=")
        if not sep:
            p.error(f"--labels: {kv!r} is not k=v")
        labels[k] = v
    ex = Executor(Client(args.server, args.token), args.group, args.instance, labels, "python-example")

    def stop(signum, frame):
        info("stopping")
        ex.stopping.set()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        ex.serve()
    except APIError as e:
        info(f"the server refused the registration: {e}")
        sys.exit(1)


if __name__ == "__main__":
    main()
