// Starts dynalite (scripts/test-servers.sh passes its CLI arguments through) so that a client which drops a
// request half-sent does not end the emulator. dynalite rethrows a request's 'error' event ("aborted",
// ECONNRESET), an uncaught exception that would stop the whole server; a real DynamoDB endpoint only loses that
// request, and the fault tests cut connections mid-request on purpose. Any other uncaught error still stops it.
'use strict';
const path = require('path');

process.on('uncaughtException', (err) => {
  if (err && err.code === 'ECONNRESET' && err.message === 'aborted') {
    console.error(new Date().toISOString() + ' dynalite: a client dropped a request half-sent; ignored');
    return;
  }
  console.error(err);
  process.exit(1);
});

// The CLI reads process.argv.slice(2); the first argument here is the path to dynalite's cli.js.
const cli = process.argv[2];
process.argv.splice(2, 1);
require(path.resolve(cli));
