module robogate/testclients/go

go 1.19
