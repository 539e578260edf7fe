package cloudprovider

type LoadBalancer interface {
	EnsureLoadBalancer() error
	A()
	B()
	C()
	D()
	E()
	F()
	G()
	H()
	I()
}

type PVLabeler interface {
	GetLabelsForVolume()
}
