#!/usr/bin/env bash
# A Compose client that validates docker-compose.yml without a Docker engine (`docker-compose config`):
# the docker CLI's compose plugin when there is one, else Debian's docker-compose package.
exec "$(dirname "$0")/ensure-debian-packages.sh" compose 'docker compose version || docker-compose --version' docker-compose
