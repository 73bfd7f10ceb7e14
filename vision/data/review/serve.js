// scorelens serve: send a photo from a phone, see its score card; the standings, kept up to date.
"use strict";

const TOKEN = document.querySelector('meta[name="scorelens-token"]').content;
const $ = (id) => document.getElementById(id);
const q = (params) => new URLSearchParams({ t: TOKEN, ...params }).toString();

function cardText(answer) {
  const card = answer.card || {};
  if (card.players && typeof card.players === "object") {
    return Object.entries(card.players).map(([colour, p]) => `${colour} ${p.total}`).join(" · ");
  }
  return String(answer.total);
}

$("upload").addEventListener("submit", async (e) => {
  e.preventDefault();
  const file = $("photo").files[0];
  if (!file) return;
  $("send-button").disabled = true;
  $("status").textContent = "reading the board…";
  $("status").className = "";
  $("result").replaceChildren();
  try {
    const response = await fetch(`/api/upload?${q({ player: $("player").value, table: $("table").value, round: $("round").value })}`,
      { method: "POST", headers: { "X-Scorelens-Token": TOKEN, "Content-Type": file.type || "application/octet-stream" }, body: file });
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error || response.statusText);
    if (answer.status !== "read") {
      $("status").textContent = `Not read: ${answer.error}. Take the photo again, from above, with the whole board in it.`;
      $("status").className = "error";
    } else {
      $("status").textContent = `Score: ${cardText(answer)}`;
      const out = [];
      if (answer.flags.length) {
        const a = document.createElement("a");
        a.href = answer.review;
        a.textContent = `Check ${answer.flags.length} flagged element${answer.flags.length === 1 ? "" : "s"}`;
        a.className = "button";
        out.push(a);
      } else {
        out.push(document.createTextNode("Nothing flagged: thank you!"));
      }
      $("result").replaceChildren(...out);
    }
    if (live.poll) standings();               // when live, the stream brings the new standings
  } catch (err) {
    $("status").textContent = err.message;
    $("status").className = "error";
  } finally {
    $("send-button").disabled = false;
  }
});

// The standings table from what /api/standings answers (and each event carries).
function showStandings(data) {
  $("count").textContent = `(${data.photos} photo${data.photos === 1 ? "" : "s"})`;
  const table = $("standings");
  table.replaceChildren();
  const head = table.insertRow();
  ["", "player", "total", "photos"].forEach((t) => { const th = document.createElement("th"); th.textContent = t; head.append(th); });
  for (const s of data.standings) {
    const row = table.insertRow();
    row.insertCell().textContent = s.rank === null ? "–" : s.rank;
    row.insertCell().textContent = s.player;
    const total = row.insertCell();
    total.textContent = s.total;
    total.className = "n";
    row.insertCell().textContent = s.unread ? `${s.photos} (${s.unread} unread)` : s.photos;
  }
}

async function standings() {
  try {
    const response = await fetch(`/api/standings?${q({})}`, { headers: { "X-Scorelens-Token": TOKEN } });
    const data = await response.json();
    if (response.ok) showStandings(data);
  } catch (err) {
    /* the next poll tries again */
  }
}

// Live: the server pushes the standings (Server-Sent Events). While the stream is down the
// page polls every 3 s; the browser reconnects the stream by itself, and polling stops then.
const live = { source: null, poll: null };

function poll(on) {
  if (on && !live.poll) {
    standings();
    live.poll = setInterval(standings, 3000);
  } else if (!on && live.poll) {
    clearInterval(live.poll);
    live.poll = null;
  }
  document.body.dataset.standings = live.poll ? "polling" : "live";
}

function subscribe() {
  if (!window.EventSource) return poll(true);
  const source = new EventSource(`/api/events?${q({})}`);
  live.source = source;
  source.addEventListener("open", () => poll(false));
  source.addEventListener("standings", (e) => { poll(false); showStandings(JSON.parse(e.data)); });
  source.addEventListener("error", () => poll(true));
}

$("to-standings").href = `/standings?${q({})}`;
if (location.pathname === "/standings") $("send").hidden = true;
subscribe();
