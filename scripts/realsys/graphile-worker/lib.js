// Shared helpers for the Graphile Worker real-system scripts: load a given release of
// graphile-worker (installed by install.sh into the realsys cache) and its pg driver.
"use strict";
const path = require("path");
const { pathToFileURL } = require("url");

const os = require("os");
const CACHE =
  process.env.QCTL_REALSYS_CACHE ||
  path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "qctl-realsys");

function versionDir(version) {
  return path.join(CACHE, "graphile-worker", version, "node_modules");
}

// graphile-worker <= 0.17 is CommonJS, 0.18 is an ES module: import() loads both.
async function load(version) {
  const dir = versionDir(version);
  const mod = await import(pathToFileURL(path.join(dir, "graphile-worker", "dist", "index.js")).href);
  const gw = mod.run ? mod : mod.default;
  const pg = require(path.join(dir, "pg"));
  const pkg = require(path.join(dir, "graphile-worker", "package.json"));
  return { gw, pg, pkg };
}

// Shift this process's wall clock (Date only; timers are untouched). Used with graphile-worker's
// own useNodeTime option so that a worker writes locked_at/run_at as if it ran OFFSET ms earlier.
function shiftClock(offsetMs) {
  if (!offsetMs) return;
  const RealDate = Date;
  class ShiftedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + offsetMs);
      else super(...args);
    }
    static now() {
      return RealDate.now() + offsetMs;
    }
  }
  global.Date = ShiftedDate;
}

module.exports = { CACHE, versionDir, load, shiftClock };
