"""The code and styles ``ui.graph_view`` adds to every pyvis graph page.

* ``PREPARE_JS`` runs before the network is created: canvas labels are decoded from their escaped
  form (a textarea's content is text only) and tooltips become elements holding the escaped markup
  ``ui.graph_view`` built (only its own ``<b>``/``<br>`` tags; document text stays entity-escaped).
* ``AFTER_JS`` runs after: drawing timestamps (``window.ragscopeGraph``, read by the browser tests),
  physics stopped once stable, and — the page being sandboxed in an opaque origin by
  ``ui.graph_component`` — clicks posted to the parent and selections received by ``postMessage``.
* ``EXTRA_CSS``: margins and tooltip width.
"""
from __future__ import annotations

# Runs in the graph page before the network is created: canvas labels are decoded from their
# escaped form (a textarea's content is text only) and tooltips become elements holding the
# escaped markup we built (only <b>/<br> tags of ours; document text stays entity-escaped).
PREPARE_JS = """
                  (function () {
                      var decoder = document.createElement("textarea");
                      function plain(s) { decoder.innerHTML = s; return decoder.value; }
                      function tip(s) {
                          var d = document.createElement("div");
                          d.className = "rs-tip";
                          d.innerHTML = s;  // s = our <b>/<br> markup around entity-escaped document text
                          return d;
                      }
                      function convert(ds) {
                          var updates = [];
                          ds.forEach(function (item) {
                              var u = {id: item.id};
                              if (typeof item.label === "string") { u.label = plain(item.label); }
                              if (typeof item.title === "string") { u.title = tip(item.title); }
                              updates.push(u);
                          });
                          ds.update(updates);
                      }
                      convert(nodes);
                      convert(edges);
                  })();
"""

AFTER_JS = """
                  window.ragscopeGraph = {started: performance.now(), stabilized: null, drawn: null};
                  network.once("stabilizationIterationsDone", function () {
                      window.ragscopeGraph.stabilized = performance.now();
                      network.setOptions({physics: false});
                  });
                  network.on("afterDrawing", function () {
                      if (window.ragscopeGraph.drawn === null) { window.ragscopeGraph.drawn = performance.now(); }
                  });
                  network.once("afterDrawing", function () {  // a precomputed layout (no physics) fills the canvas
                      try { if (!network.physics.physicsEnabled) { network.fit({animation: false}); } } catch (e) {}
                  });
                  // The page runs sandboxed (opaque origin): clicks leave and selections arrive by message.
                  if (window.parent !== window) {
                      network.on("click", function (params) {
                          var msg = null;
                          if (params.nodes && params.nodes.length) {
                              msg = {ragscope: "graph-click", kind: "node", id: String(params.nodes[0])};
                          } else if (params.edges && params.edges.length) {
                              var edge = edges.get(params.edges[0]);
                              if (edge) {
                                  msg = {ragscope: "graph-click", kind: "edge", source: String(edge.from),
                                         target: String(edge.to)};
                              }
                          }
                          if (msg) { window.parent.postMessage(msg, "*"); }
                      });
                      window.addEventListener("message", function (event) {
                          var msg = event.data;
                          if (event.source !== window.parent || !msg || msg.ragscope !== "graph-select") { return; }
                          try { network.selectNodes([String(msg.id)]); } catch (e) { /* not drawn in this view */ }
                      });
                      window.parent.postMessage({ragscope: "graph-ready"}, "*");
                  }
"""

EXTRA_CSS = """
<style>
  body { margin: 0; font-family: sans-serif; }
  #mynetwork { border: none !important; }
  .rs-tip { max-width: 420px; white-space: normal; font-size: 12px; line-height: 1.35; }
  div.vis-tooltip { max-width: 440px; white-space: normal !important; }
  #loadingBar { display: none !important; }  /* layouts are precomputed: stabilisation is short */
</style>
"""
