module github.com/towerd/towerd

go 1.26.0

require (
	github.com/coreos/go-systemd/v22 v22.7.0 // indirect
	github.com/eclipse/paho.mqtt.golang v1.5.1 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/jonboulle/clockwork v0.5.0 // indirect
	github.com/mochi-mqtt/server/v2 v2.7.9 // indirect
	github.com/rs/xid v1.4.0 // indirect
	gocv.io/x/gocv v0.31.0 // indirect
	golang.org/x/image v0.48.0 // indirect
	golang.org/x/net v0.44.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.44.0 // indirect
	periph.io/x/conn/v3 v3.7.3 // indirect
	periph.io/x/host/v3 v3.8.5 // indirect
)
