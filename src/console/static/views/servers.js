// The opencode servers the console follows and the private instances of the registry.
import { useState } from "/vendor/hooks.mjs";
import { html, post, shortDir } from "../ui.js";

function StopButton({ pid }) {
  const [state, setState] = useState("");
  const stop = () => {
    setState("stopping…");
    post(`/api/instances/${pid}/stop`, {}).then(
      () => setState("stopped"),
      (e) => setState(e.message),
    );
  };
  return html`<button onClick=${stop} disabled=${state === "stopping…" || state === "stopped"}>Stop</button> <span class="small">${state}</span>`;
}

export function ServersPage({ servers }) {
  if (servers.length === 0)
    return html`<p class="muted">No opencode server known yet: servers appear when a task starts on one, or a private instance is registered.</p>`;
  return html`<h2>Servers</h2>
    <div class="scroll">
      <table class="servers">
        <thead>
          <tr>
            <th>URL</th>
            <th>Health</th>
            <th>Version</th>
            <th class="num">Tasks</th>
            <th>Private instance</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          ${servers.map(
            (s) =>
              html`<tr data-testid="server-row">
                <td><code>${s.url}</code></td>
                <td>
                  ${s.healthy ? html`<span class="add">healthy</span>` : html`<span class="del">unreachable</span>${s.error ? html`<div class="small muted">${s.error}</div>` : ""}`}
                </td>
                <td>${s.version ?? "–"}${s.engine ? html` <span class="small muted" data-testid="server-engine">${s.engine} API</span>` : ""}</td>
                <td class="num">${s.tasks}</td>
                <td>
                  ${
                    s.instance
                      ? html`pid ${s.instance.pid} · ${shortDir(s.instance.directory)} · ${s.instance.sessions} sessions · sandbox ${s.instance.sandbox}
                          <div class="small muted">owner pid ${s.instance.conductor_pid}, last used ${s.instance.last_used_at ?? s.instance.started_at}</div>`
                      : "shared"
                  }
                </td>
                <td>${s.instance ? html`<${StopButton} pid=${s.instance.pid} />` : ""}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
}
