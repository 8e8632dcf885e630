package main

// Event files (epoll, eventfd, timerfd) behave as on Linux: the events
// guest in four flavours and python's selectors module (which subprocess,
// asyncio and http.client import) give the native output.

import (
	"os"
	"testing"
)

func TestEventsGuest(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			compare(t, nil, t.TempDir(), guestBin(t, v, "events"))
		})
	}
}

// pySelectors uses epoll through selectors: pipes, an eventfd, a thread
// that writes while the main thread waits, a regular file (EPERM),
// edge-triggered events and a non-blocking eventfd.
const pySelectors = `
import os, selectors, threading, time
import subprocess, http.client
s = selectors.DefaultSelector()
print(type(s).__name__)
r, w = os.pipe()
efd = os.eventfd(0)
s.register(r, selectors.EVENT_READ, "pipe")
s.register(efd, selectors.EVENT_READ, "eventfd")
s.register(w, selectors.EVENT_WRITE, "pipe-w")
print(sorted((k.data, m) for k, m in s.select(0)))
s.unregister(w)
print(s.select(0))
os.write(w, b"x")
os.eventfd_write(efd, 3)
print([(k.data, m) for k, m in s.select(1)])
print(os.read(r, 10), os.eventfd_read(efd))
t0 = time.monotonic()
print(s.select(0.02), time.monotonic() - t0 >= 0.02)
def later():
    time.sleep(0.05)
    os.write(w, b"from thread")
t = threading.Thread(target=later); t.start()
print([(k.data, m) for k, m in s.select(5)])
t.join()
print(os.read(r, 100))
try:
    s.register(os.open("/etc/passwd", os.O_RDONLY), selectors.EVENT_READ)
except OSError as e:
    print("regular file:", e.errno)
import select
ep = select.epoll()
ep.register(efd, select.EPOLLIN | select.EPOLLET)
os.eventfd_write(efd, 1)
print(ep.poll(0), ep.poll(0))
os.eventfd_write(efd, 1)
print(ep.poll(0))
os.set_blocking(efd, False)
print(os.eventfd_read(efd))
try: os.eventfd_read(efd)
except BlockingIOError as e: print("EAGAIN", e.errno)
`

func TestPythonSelectors(t *testing.T) {
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("%s missing: make deps installs it", py)
	}
	compare(t, nil, t.TempDir(), py, "-c", pySelectors)
}
