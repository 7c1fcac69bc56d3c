// VocalGrad listening test page. All state lives on the server (answers.jsonl): reloading the page,
// closing the browser or restarting the server resumes at the first unanswered clip.
"use strict";
(function () {
  const token = document.querySelector('meta[name="listen-token"]').content;
  const $ = (id) => document.getElementById(id);
  const player = $("player");
  let state = null;      // last /api/next body
  let item = null;       // current clip
  let started = false;   // the intro was dismissed (user gesture given: audio may autoplay)
  let busy = false;      // an answer is on its way (double clicks and key repeats are ignored)
  let endedAt = null;    // performance.now() at the end of the first playback
  let plays = 0;
  let screen = "none";

  function show(name) {
    for (const id of ["intro", "trial", "feedback", "finished"]) $(id).hidden = id !== name;
    screen = name;
  }

  function fail(msg) {
    $("error").textContent = msg;
    $("error").hidden = false;
  }

  async function api(path, body) {
    const init = { headers: { "X-Listen-Token": token }, cache: "no-store" };
    if (body !== undefined) {
      init.method = "POST";
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const res = await fetch(path, init);
    let data = null;
    try { data = await res.json(); } catch (e) { data = { error: "bad response" }; }
    if (!res.ok) throw new Error((data && data.error) || ("HTTP " + res.status));
    return data;
  }

  function progress(p) {
    const total = p.total + p.practice_total;
    const done = p.done + p.practice_done;
    $("progress").max = Math.max(total, 1);
    $("progress").value = done;
    let text = `${p.done} / ${p.total} answered`;
    if (p.practice_total) text += ` (practice ${p.practice_done} / ${p.practice_total})`;
    $("progress-text").textContent = text;
  }

  async function next() {
    $("error").hidden = true;
    try {
      state = await api("/api/next");
    } catch (e) {
      fail("Could not reach the listening server: " + e.message + ". Is `vocalgrad listen` still running?");
      return;
    }
    $("who").textContent = "Annotator: " + state.annotator;
    progress(state.progress);
    if (state.phase === "finished") { player.removeAttribute("src"); show("finished"); return; }
    if (!started) {
      $("intro-practice").hidden = state.phase !== "practice";
      show("intro");
      return;
    }
    present(state.item);
  }

  function present(it) {
    item = it;
    busy = false;
    endedAt = null;
    plays = 0;
    $("phase").textContent = state.phase === "practice" ? "Practice clip (you will be told the answer)" : "";
    $("question").textContent = it.question;
    $("meanings").textContent = `Increase: ${it.increase_means}. Decrease: ${it.decrease_means}.`;
    $("play-state").textContent = "loading…";
    setAnswerable(false);
    show("trial");
    player.src = "/audio/" + it.token;
    play();
  }

  function setAnswerable(on) {
    for (const b of document.querySelectorAll("button.answer")) b.disabled = !on;
  }

  function play() {
    const p = player.play();
    if (p && p.catch) p.catch(() => { $("play-state").textContent = "press R (or the button) to play"; });
  }

  player.addEventListener("play", () => { plays += 1; $("play-state").textContent = "playing…"; });
  player.addEventListener("ended", () => {
    $("play-state").textContent = "played";
    if (endedAt === null) endedAt = performance.now();
    if (!busy) setAnswerable(true);
  });
  player.addEventListener("error", () => fail("This clip could not be played; reload the page."));

  async function answer(direction) {
    if (screen !== "trial" || busy || endedAt === null || !item) return;
    busy = true;
    setAnswerable(false);
    const rt = (performance.now() - endedAt) / 1000;
    let res;
    try {
      res = await api("/api/answer", { token: item.token, answer: direction, rt_sec: rt, plays: plays });
    } catch (e) {
      busy = false;
      setAnswerable(true);
      fail("The answer was not saved: " + e.message);
      return;
    }
    if (res.progress) progress(res.progress);
    if (res.feedback) {
      const f = res.feedback;
      const el = $("feedback-text");
      el.className = f.correct ? "right" : "wrong";
      el.textContent = (f.correct ? "Correct: " : "Not quite: ") + `the ${item.attribute} ${f.direction}s (${f.means}).`;
      const img = $("feedback-img");
      img.hidden = false;
      img.src = f.show;
      show("feedback");
      return;
    }
    next();
  }

  function proceed() {
    if (screen === "intro") { started = true; present(state.item); }
    else if (screen === "feedback") { $("feedback-img").removeAttribute("src"); next(); }
  }

  $("start").addEventListener("click", proceed);
  $("continue").addEventListener("click", proceed);
  $("replay").addEventListener("click", () => { player.currentTime = 0; play(); });
  for (const b of document.querySelectorAll("button.answer")) {
    b.addEventListener("click", () => answer(b.dataset.answer));
  }
  document.addEventListener("keydown", (ev) => {
    if (ev.repeat || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const k = ev.key.toLowerCase();
    if (k === "arrowup" || k === "i") { ev.preventDefault(); answer("increase"); }
    else if (k === "arrowdown" || k === "d") { ev.preventDefault(); answer("decrease"); }
    else if (k === "r") { ev.preventDefault(); if (screen === "trial") { player.currentTime = 0; play(); } }
    else if (k === "enter" || k === " ") {
      if (screen === "intro" || screen === "feedback") { ev.preventDefault(); proceed(); }
    }
  });
  next();
})();
