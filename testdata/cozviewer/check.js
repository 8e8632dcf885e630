// check.js PROFILE.coz - runs Coz's own viewer code (profile_excerpt.js) on a
// profile and prints, as JSON, the warnings it raised and the speedup curves
// it computed (Profile.getSpeedupData with no minimum of points).
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const code = fs.readFileSync(path.join(__dirname, 'profile_excerpt.js'), 'utf8');
const ctx = vm.createContext({});
vm.runInContext(code + '\nthis.Profile = Profile;', ctx);
const warnings = [];
const text = fs.readFileSync(process.argv[2], 'utf8');
const profile = new ctx.Profile(text, null, null, () => 0, (title, msg) => warnings.push(title + ': ' + msg));
const lines = profile.getSpeedupData(0).map((l) => ({
  name: l.name,
  points: l.progress_points.map((p) => ({ name: p.name, measurements: p.measurements })),
}));
process.stdout.write(JSON.stringify({ warnings, lines }) + '\n');
