# towerd — see README.md. `make test` is the project's test command.
GO      ?= go
PREFIX  ?= /usr/local
DESTDIR ?=
BIN     := bin/towerd
APT_PKGS := libopencv-dev pkg-config mosquitto mosquitto-clients
# Race detector always; -p 1 keeps the 2-core machine responsive.
TESTFLAGS ?= -race -count=1

.PHONY: all deps build test vet bench sim install clean

all: build

# deps installs the Debian packages towerd builds and tests with, only when
# one is missing (apt-get update first, through sudo when not root).
deps:
	@command -v $(GO) >/dev/null 2>&1 || { echo "make deps: Go 1.26 is required (https://go.dev/dl), not found in PATH" >&2; exit 1; }
	@missing=""; for p in $(APT_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
		echo "make deps: installing$$missing"; \
		$$sudo apt-get update && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y --no-install-recommends $$missing; \
	fi

build: deps
	$(GO) build -o $(BIN) ./cmd/towerd

vet: deps
	$(GO) vet ./...

# -race slows training tenfold, so under it numeral's toy model trains a
# few epochs and its accuracy goes unchecked: that package runs once more
# without it.
test: deps
	$(GO) vet ./...
	$(GO) test $(TESTFLAGS) ./...
	$(GO) test -count=1 ./vision/numeral/

bench: deps
	$(GO) test -run '^$$' -bench . -benchmem ./...

# sim runs the daemon with a simulated tower and its embedded broker; press
# Enter to press the button. SIMFLAGS adds flags (--seed 1, --listen 127.0.0.1:1884...).
sim: build
	exec ./$(BIN) run --sim $${TOWERD_STATE_DIR:+--state-dir $$TOWERD_STATE_DIR} $(SIMFLAGS)

install: build
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/towerd
	install -d $(DESTDIR)/lib/systemd/system
	# The unit runs the binary where PREFIX put it.
	sed 's|^ExecStart=/usr/local/bin/towerd |ExecStart=$(PREFIX)/bin/towerd |' systemd/towerd.service > $(DESTDIR)/lib/systemd/system/towerd.service
	chmod 0644 $(DESTDIR)/lib/systemd/system/towerd.service
	install -D -m 0644 config/towerd.example.yaml $(DESTDIR)/etc/towerd/towerd.example.yaml
	install -d $(DESTDIR)$(PREFIX)/share/doc/towerd
	install -m 0644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/towerd/

clean:
	rm -rf bin
