#!/usr/bin/env bash
# Install what the Delayed::Job round trip needs, idempotently: Debian's ruby-delayed-job (4.1.9) and
# ruby-delayed-job-active-record (4.1.6) on ruby-rails (Active Record 6.1), with the pg and mysql2 drivers.
# VERSION: v4.1.9, the release Debian 12 ships (rubygems.org is not reachable here, so no other release is run).
set -euo pipefail
VERSION="${1:-v4.1.9}"
case "$VERSION" in v4.1.9) ;; *) echo "install.sh: unknown Delayed::Job release '$VERSION' (v4.1.9, Debian's)" >&2; exit 2;; esac
PKGS="ruby-delayed-job ruby-delayed-job-active-record ruby-rails ruby-pg ruby-mysql2"
if ! ruby -e 'require "active_record"; require "delayed_job"; require "delayed_job_active_record"; require "pg"; require "mysql2"' 2>/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q $PKGS >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q $PKGS >/dev/null; }
fi
installed=$(dpkg-query -W -f='${Version}' ruby-delayed-job)
case "$installed" in 4.1.9*) ;; *) echo "install.sh: ruby-delayed-job is $installed, not 4.1.9" >&2; exit 1;; esac
echo "delayed_job $VERSION: ruby-delayed-job $installed, ruby-delayed-job-active-record $(dpkg-query -W -f='${Version}' ruby-delayed-job-active-record), ruby $(ruby -e 'print RUBY_VERSION')"
