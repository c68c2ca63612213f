#!/bin/sh
# Entry of the management-api image (run under tini, which forwards signals and reaps children).
#   (no argument) | serve   the API (dist/server.js)
#   migrate [options]       the one-shot migration job (dist/migrate.js; `migrate --help` lists options)
#   anything else           run as given (e.g. sh for debugging)
set -e
case "${1:-serve}" in
  serve) [ $# -gt 0 ] && shift; exec node /app/dist/server.js "$@" ;;
  migrate) shift; exec node /app/dist/migrate.js "$@" ;;
  *) exec "$@" ;;
esac
