#!/usr/bin/env python3
"""Drives headless Chromium through its DevTools protocol on a pipe (no websocket library needed).

Reads one JSON command per line on stdin and answers one JSON line per command on stdout:
  {"navigate": URL}                   loads a page and waits until it is the page shown, loaded
  {"eval": EXPRESSION}                the expression's value (promises awaited)
  {"waitFor": EXPRESSION, "limit": S} evaluates until the value is truthy (every 10 ms, at most S seconds;
                                      an expression that throws counts as not yet true)
  {"screenshot": PATH}                writes a PNG of the page
Answers are {"ok": true, "value": …} or {"ok": false, "error": …}.
"""
import base64, json, os, shutil, subprocess, sys, tempfile, time

chrome_in_r, chrome_in_w = os.pipe()    # we write, Chromium reads (its fd 3)
chrome_out_r, chrome_out_w = os.pipe()  # Chromium writes (its fd 4), we read
profile = tempfile.mkdtemp(prefix="browser-profile-")


def child_fds():
    os.dup2(chrome_in_r, 3)
    os.dup2(chrome_out_w, 4)


browser = subprocess.Popen(
    [os.environ.get("CHROMIUM", "chromium"), "--headless", "--no-sandbox", "--disable-gpu",
     "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
     "--hide-scrollbars", "--user-data-dir=" + profile, "about:blank"],
    preexec_fn=child_fds, close_fds=True, pass_fds=(3, 4),
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.close(chrome_in_r)
os.close(chrome_out_w)
buffer = b""
next_id = 0
session = None


def send(method, params=None, with_session=True):
    global next_id, buffer
    next_id += 1
    message = {"id": next_id, "method": method, "params": params or {}}
    if with_session and session:
        message["sessionId"] = session
    os.write(chrome_in_w, json.dumps(message).encode() + b"\0")
    while True:
        while b"\0" not in buffer:
            chunk = os.read(chrome_out_r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            buffer += chunk
        raw, buffer = buffer.split(b"\0", 1)
        reply = json.loads(raw)
        if reply.get("id") == next_id:
            if "error" in reply:
                raise RuntimeError(reply["error"].get("message", str(reply["error"])))
            return reply.get("result", {})


def evaluate(expression):
    result = send("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True})
    if "exceptionDetails" in result:
        raise RuntimeError(result["exceptionDetails"].get("exception", {}).get("description", "exception"))
    return result.get("result", {}).get("value")


last_error = ""


def attempt(condition):
    """The condition's value, or False while it throws: a page being replaced (a form's submission, a
    navigation) has no elements for a moment."""
    global last_error
    try:
        return evaluate(condition)
    except RuntimeError as error:
        last_error = " (last error: %s)" % error
        return False


target = send("Target.createTarget", {"url": "about:blank"}, with_session=False)["targetId"]
session = send("Target.attachToTarget", {"targetId": target, "flatten": True}, with_session=False)["sessionId"]
send("Page.enable")
send("Runtime.enable")
send("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 860, "deviceScaleFactor": 1, "mobile": False})

for line in sys.stdin:
    try:
        command = json.loads(line)
        if "navigate" in command:
            send("Page.navigate", {"url": command["navigate"]})
            # The old document stays "complete" until the new one replaces it: wait for the new one's URL.
            loaded = "location.href === %s && document.readyState === 'complete'" % json.dumps(command["navigate"])
            deadline = time.time() + 30
            while not attempt(loaded) and time.time() < deadline:
                time.sleep(0.02)
            value = None
        elif "eval" in command:
            value = evaluate(command["eval"])
        elif "waitFor" in command:
            deadline = time.time() + command.get("limit", 60)
            condition = "!!(" + command["waitFor"] + ")"
            value = attempt(condition)
            while not value and time.time() < deadline:
                time.sleep(0.01)
                value = attempt(condition)
            if not value:
                raise RuntimeError("timed out waiting for " + command["waitFor"] + last_error)
        elif "screenshot" in command:
            data = send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
            with open(command["screenshot"], "wb") as file:
                file.write(base64.b64decode(data))
            value = command["screenshot"]
        else:
            raise RuntimeError("unknown command " + line.strip())
        answer = {"ok": True, "value": value}
    except Exception as error:  # reported to the test, which fails with it
        answer = {"ok": False, "error": str(error)}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()

browser.terminate()
browser.wait()
shutil.rmtree(profile, ignore_errors=True)
