#!/bin/sh
# The Steward image's entrypoint: one service (or task) per container.
set -eu
cd /app
what="${1:-help}"
[ $# -gt 0 ] && shift
case "$what" in
  gateway | policy | tool-exec | agent-runner) exec node "services/$what/dist/main.js" "$@" ;;
  prepare) exec node infra/containers/prepare.mjs "$@" ;;
  planes) exec node infra/containers/planes.cjs "$@" ;;
  token) exec node infra/local/token.mjs "$@" ;;
  replay | rebuild-projection) exec node "services/agent-runner/dist/$what.js" "$@" ;;
  help)
    echo "usage: steward gateway|policy|tool-exec|agent-runner|prepare|planes|token|replay|rebuild-projection" >&2
    exit 2
    ;;
  *) exec "$what" "$@" ;;
esac
