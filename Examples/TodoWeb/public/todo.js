// The todo list in a browser: one session of todo-web over WebSocket, through vmhost's browser
// client copied beside this page (vmhost/web/vmhost.js and vmhost/js/protocol.js, see README.md).
import { Host } from "./vmhost/web/vmhost.js";

const $ = (id) => document.getElementById(id);
const host = await Host.connect();
await host.initialize();
// The view-model lives in todo-web; this page draws what it says and sends what the user does.
const list = await host.create("TodoList");
const render = () => {
  const { items, remaining, loading } = list.values;
  $("status").textContent = loading ? "Loading…" : `${remaining} left`;
  $("items").replaceChildren(...items.map((todo) => {
    const item = document.createElement("li");
    item.textContent = todo.title;
    item.className = todo.done ? "done" : "";
    item.onclick = () => list.send("toggle", { id: todo.id }).catch(show);
    return item;
  }));
};
const show = (error) => { $("error").textContent = error.message; };
list.on("changed", render);
await list.subscribe();
render();
list.send("load").catch(show);
$("add").onsubmit = (event) => {
  event.preventDefault();
  list.send("add", $("title").value).then(() => { $("title").value = ""; }, show);
};
