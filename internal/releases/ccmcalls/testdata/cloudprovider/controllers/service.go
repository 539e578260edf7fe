package controllers

import cloudprovider "k8s.io/cloud-provider"

func sync(lb cloudprovider.LoadBalancer) {
	lb.EnsureLoadBalancer()
	lb.A()
	lb.B()
	lb.C()
	lb.D()
	lb.E()
	lb.F()
	lb.G()
	lb.H()
	lb.I()
}
