module simrun

go 1.26.0

require (
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/arch v0.33.0 // indirect
)
