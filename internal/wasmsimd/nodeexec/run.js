// Runs a Go WebAssembly binary built with the build tag wasmsimd under
// Node.js, as GOROOT's wasm_exec_node.js runs one without: argv is
// wasm_exec.js, link.js, the kernels module, the binary, its arguments.
"use strict";
globalThis.require = require;
globalThis.fs = require("fs");
globalThis.path = require("path");
globalThis.TextEncoder = require("util").TextEncoder;
globalThis.TextDecoder = require("util").TextDecoder;
globalThis.performance ??= require("performance");
globalThis.crypto ??= require("crypto");

const [wasmExec, link, kernels, bin, ...args] = process.argv.slice(2);
require(wasmExec);
const audiopostSIMD = require(link);
const go = new Go();
go.argv = [bin, ...args];
go.env = Object.assign({ TMPDIR: require("os").tmpdir() }, process.env);
go.exit = process.exit;
const start = audiopostSIMD(go.importObject, new WebAssembly.Module(fs.readFileSync(kernels)));
WebAssembly.instantiate(fs.readFileSync(bin), go.importObject).then((result) => {
	process.on("exit", (code) => {
		if (code === 0 && !go.exited) {
			go._pendingEvent = { id: 0 };
			go._resume();
		}
	});
	start(result.instance);
	return go.run(result.instance);
}).catch((err) => {
	console.error(err);
	process.exit(1);
});
