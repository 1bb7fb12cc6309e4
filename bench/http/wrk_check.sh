#!/usr/bin/env bash
# bench/http/wrk_check.sh SERVER: an HTTP server of bench/http (strata-http,
# asio-http) answers a real client. Both print the same "listening on" and
# "requests answered" lines and take the same options. Starts the server
# (2 workers, 1 ms mock delay) on a free port, runs wrk (keep-alive,
# 2 threads, 20 connections, 2 s) against it, and checks that wrk completed
# requests with no socket errors and no non-2xx answers, and that the server
# counted as many answers as wrk got (at least). Exit 77 (skip) without wrk,
# saying so.
set -euo pipefail
server=${1:?usage: wrk_check.sh SERVER (strata-http or asio-http)}
command -v wrk >/dev/null || { echo "wrk_check: SKIP: no wrk (apt-get install wrk)"; exit 77; }
out=$(mktemp)
"$server" --workers 2 --delay-us 1000 >"$out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 100); do
  grep -q "listening on" "$out" && break
  sleep 0.05
done
port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$out")
[[ -n $port ]] || { echo "wrk_check: FAIL: the server did not start:"; cat "$out"; exit 1; }
report=$(wrk -t2 -c20 -d2s --latency "http://127.0.0.1:$port/")
echo "$report"
kill -INT $pid
wait $pid || { echo "wrk_check: FAIL: the server exited non-zero"; cat "$out"; exit 1; }
head -2 "$out"
done_requests=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' <<<"$report")
[[ ${done_requests:-0} -gt 100 ]] || { echo "wrk_check: FAIL: wrk completed ${done_requests:-no} requests"; exit 1; }
if grep -q "Socket errors\|Non-2xx" <<<"$report"; then echo "wrk_check: FAIL: errors above"; exit 1; fi
answered=$(sed -n 's/.* \([0-9]*\) requests answered.*/\1/p' "$out")
[[ $answered -ge $done_requests ]] || { echo "wrk_check: FAIL: server answered $answered < $done_requests"; exit 1; }
echo "wrk_check: PASS: $done_requests requests over keep-alive, server answered $answered"
