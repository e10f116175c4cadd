// audiopostSIMD links audiopost's SIMD kernels (internal/wasmsimd) to a
// Go WebAssembly build: it adds the import module the engine declares
// them under to importObject, and returns the function to call with the
// engine's instance, before go.run, to instantiate the kernels over the
// engine's memory. Each import calls its kernel through JavaScript, once
// per block of samples.
function audiopostSIMD(importObject, kernels) {
  var exports = null;
  var imports = {};
  WebAssembly.Module.exports(kernels).forEach(function (e) {
    var name = e.name;
    var fn = null;
    imports[name] = function (a, b, c, d, f, g, h) {
      if (fn === null) { fn = exports[name]; }
      fn(a, b, c, d, f, g, h);
    };
  });
  importObject.audiopost_simd = imports;
  return function (instance) {
    exports = new WebAssembly.Instance(kernels, { env: { mem: instance.exports.mem } }).exports;
  };
}
if (typeof module !== "undefined") { module.exports = audiopostSIMD; }
