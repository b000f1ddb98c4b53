module simrun

go 1.26.0

require (
	github.com/chromedp/chromedp v0.24.0
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/stretchr/testify v1.12.1
	golang.org/x/arch v0.33.0
	golang.org/x/sys v0.32.0
)

require (
	github.com/chromedp/cdproto v0.160.1 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
